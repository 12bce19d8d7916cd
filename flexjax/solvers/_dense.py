r"""Dense inverse, solve and LU factors for the small matrices of Newton steps, safe on CPU.

One matrix goes to LAPACK (`jnp.linalg.inv`, `jnp.linalg.solve`, `lu_factor`). A batch
(under `vmap`) never goes to XLA's *batched* LAPACK kernels on CPU: jaxlib 0.10.2's
batched kernels hand their samples to XLA's intra-op thread pool and wait for them,
and the process hangs when every thread of that pool is waiting so. That happens when
the CPU is split into several JAX devices (`--xla_force_host_platform_device_count`,
how `run_batch` shards samples over the cores of one machine), and on one device when
XLA's runtime runs two independent batched factorizations at once (a 4-sample
`run_batch` of the parallel robot on 2 cores: both pool threads waited inside batched
LU factorizations, seen in their stacks). So on a single CPU device a batch is solved one sample
at a time by the unbatched LAPACK call (`lax.map`, `_one_at_a_time`), and with several
devices by Gauss-Jordan elimination with partial pivoting written in XLA operations
(`gauss_jordan`), which never leaves the device program (on one device it is no faster
than LAPACK and slower for larger matrices, docs/performance.md).

`solve` is differentiable in both arguments (`lax.custom_linear_solve`: derivatives
come from the matrix-vector product; the solves are reused for tangents and
transposes); `inverse` and `lu_factor` are meant for matrices that are not
differentiated (kept Newton matrices).
"""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

UNROLL_MAX = 32  # columns: a static loop lets XLA fuse across columns; bounded for compile time


def gauss_jordan(A, B):
    r"""$A^{-1}B$ for a batch of square `A[..., n, n]` and `B[..., n, k]`, by Gauss-Jordan
    elimination with partial pivoting on $[A \mid B]$, vectorized over the batch (one
    `fori_loop` over the n columns). Rows are not swapped: column j is eliminated with
    the unused row p_j of largest |entry|, which ends up holding unknown j. A singular
    `A` gives non-finite entries (a zero pivot), never a finite wrong answer."""
    n = A.shape[-1]
    batch = A.shape[:-2]
    rows = jnp.arange(n).reshape((1,) * len(batch) + (n,))

    def column(j, carry):
        M, used, order = carry
        col = M[..., :, j]
        p = jnp.argmax(jnp.where(used, -1.0, jnp.abs(col)), axis=-1)
        at_p = rows == p[..., None]
        pivot_row = jnp.take_along_axis(M, p[..., None, None], axis=-2)[..., 0, :]
        pivot_row = pivot_row / jnp.take_along_axis(col, p[..., None], axis=-1)
        # one rank-1 update: zeroes column j in every row but p, and sets row p to pivot_row
        M = M - (col - at_p.astype(col.dtype))[..., :, None] * pivot_row[..., None, :]
        return M, used | at_p, order.at[..., j].set(p)

    carry = (jnp.concatenate([A, B], axis=-1), jnp.zeros(batch + (n,), bool), jnp.zeros(batch + (n,), int))
    M, _, order = jax.lax.fori_loop(0, n, column, carry, unroll=n <= UNROLL_MAX)
    return jnp.take_along_axis(M[..., n:], order[..., :, None], axis=-2)


def _lapack_may_hang() -> bool:
    """Where even one LAPACK call per sample is not used for a batch: a CPU split into
    several devices (see the module docstring)."""
    return jax.default_backend() == "cpu" and jax.local_device_count() > 1


@jax.custom_batching.custom_vmap
def inverse(A):
    """$A^{-1}$ of one square matrix; under `vmap` see the module docstring."""
    return jnp.linalg.inv(A)


@inverse.def_vmap
def _inverse_vmap(axis_size, in_batched, A):
    if not in_batched[0] or jax.default_backend() != "cpu":
        return jnp.linalg.inv(A), in_batched[0]
    if not _lapack_may_hang():
        return _one_at_a_time(jnp.linalg.inv, A), True
    return gauss_jordan(A, jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)), True


@jax.custom_batching.custom_vmap
def _solve(A, b):
    return jnp.linalg.solve(A, b)


@_solve.def_vmap
def _solve_vmap(axis_size, in_batched, A, b):
    a_batched, b_batched = in_batched
    if not a_batched:  # one matrix for every right-hand side: one unbatched factorization
        return (jnp.linalg.solve(A, b.T).T if b_batched else jnp.linalg.solve(A, b)), b_batched
    b = b if b_batched else jnp.broadcast_to(b, A.shape[:-1])
    if jax.default_backend() != "cpu":
        return jnp.linalg.solve(A, b[..., None])[..., 0], True
    if not _lapack_may_hang():
        return _one_at_a_time(lambda Ab: jnp.linalg.solve(*Ab), (A, b)), True
    return gauss_jordan(A, b[..., None])[..., 0], True


def _one_at_a_time(f, xs):
    """`f` over the leading axis of `xs`, one unbatched LAPACK call per sample (a loop
    in the program): XLA's CPU runtime may run two independent batched LAPACK calls at
    once, and each hands its batch to the same intra-op thread pool and waits for it,
    which can deadlock (two concurrent batched LU factorizations of a 4-sample
    `run_batch` of the parallel robot hung, seen in the threads' stacks). An unbatched
    call runs on its own thread."""
    return jax.lax.map(f, xs)


@jax.custom_batching.custom_vmap
def lu_factor(A):
    """`jax.scipy.linalg.lu_factor(A)` of one square matrix; under `vmap` one LAPACK call
    per sample (`_one_at_a_time`)."""
    return jsl.lu_factor(A)


@lu_factor.def_vmap
def _lu_factor_vmap(axis_size, in_batched, A):
    if not in_batched[0] or jax.default_backend() != "cpu":
        return jsl.lu_factor(A), (in_batched[0], in_batched[0])
    return _one_at_a_time(jsl.lu_factor, A), (True, True)


def solve(A, b):
    """$A^{-1} b$ for a square `A` and a vector `b`; under `vmap` see the module docstring."""
    return jax.lax.custom_linear_solve(
        lambda x: A @ x, b, solve=lambda _, r: _solve(A, r), transpose_solve=lambda _, r: _solve(A.T, r)
    )
