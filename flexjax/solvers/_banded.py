r"""Factorization and solves of bordered block-tridiagonal matrices (`structure.BandedMatrix`),
in XLA operations only.

**Band.** A band matrix of half-bandwidth $b$, cut into blocks of size $s \ge b$, is block
tridiagonal. Gaussian elimination with partial pivoting restricted to the rows that
can hold a pivot is LAPACK's `gbtrf` (Golub & Van Loan, *Matrix Computations*, 4th ed.,
§4.3: the upper bandwidth grows to $2b$ by the row exchanges, here to two blocks): the
pivot of a column of block $k$ lies in block rows $k$ or $k+1$, so each block step
eliminates $s$ columns in a $2s \times 3s$ panel, the $s$ rows left over from the
previous step on top of block row $k+1$. The panel is eliminated by Gauss-Jordan with
partial pivoting (pivot: the unused row of largest modulus; rows are not swapped but
recorded) on $[P \mid I_{2s}]$, which leaves

$$G_k P_k = \begin{bmatrix} I & W_k \\ 0 & C_{k+1} \end{bmatrix},$$

$G_k$ ($2s \times 2s$) the panel's row operations, $W_k$ ($s \times 2s$) the pivot rows'
coupling to the next two blocks, $C_{k+1}$ the $s$ rows carried on. A solve is then a
forward scan $v = G_k [c; b_{k+1}]$ ($y_k$ = the top half, $c$ = the bottom) and a backward
scan $x_k = y_k - W_k [x_{k+1}; x_{k+2}]$: matrix-vector products only. One scan step per
block of $s \approx b$ columns (not per column) keeps the scan short, which is what costs
on a CPU; the flops, $O(n s^2)$, are few. Gauss-Jordan within a panel is forward stable
like elimination with partial pivoting (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., §14.4). A singular matrix gives non-finite entries (a zero pivot),
never a finite wrong answer. No LAPACK call: batches (`vmap`) never reach the batched
LAPACK kernels that can hang on a CPU split into several devices (`flexjax.solvers._dense`).

**Border.** With $J = [A\ B;\ C\ D]$ ($A$ the band), block elimination: $S = D - C A^{-1}B$
(the small Schur complement, inverted once), $y = S^{-1}(g - C A^{-1}f)$,
$x = A^{-1}(f - B y)$ (block LU, Golub & Van Loan §3.2; Govaerts & Pryce 1990 for
bordered systems). It needs $A$ non-singular; the border holds only unknowns with very
long rows and columns, so $A$ keeps every coordinate's mass block.

`linear_solve(J, b)` is differentiable in `J` and `b` (`jax.lax.custom_linear_solve`,
derivatives from `structure.matvec`), as `flexjax.solvers._dense.solve` is for dense
matrices.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from . import _dense as dense
from ._structure import BandedMatrix, NewtonStructure, matvec

UNROLL = 4  # pivot steps per loop iteration in a panel: full unrolling compiles slower for ~10 % less run time


class BandedLU(eqx.Module):
    """A factorization of a `structure.BandedMatrix` (a pytree: `vmap` factors and solves
    a batch). `transforms` $G_k$ (k, 2s, 2s), `upper` $W_k$ (k, s, 2s); with a border,
    `solved_col` $A^{-1}B$, `row` $C$ and `schur_inverse` $S^{-1}$."""

    transforms: Float[Array, "k p p"]
    upper: Float[Array, "k s p"]
    solved_col: Float[Array, "N nb"]
    row: Float[Array, "nb N"]
    schur_inverse: Float[Array, "nb nb"]
    structure: NewtonStructure = eqx.field(static=True)


def factor(J: BandedMatrix) -> BandedLU:
    """The factorization of `J` (module docstring)."""
    st = J.structure
    G, W = _factor_band(J.blocks)
    if st.border:
        solved = jax.vmap(lambda c: _solve_band(G, W, c), in_axes=1, out_axes=1)(J.col)
        schur_inverse = dense.inverse(J.corner - J.row @ solved)
    else:
        solved, schur_inverse = J.col, J.corner
    return BandedLU(G, W, solved, J.row, schur_inverse, st)


def zeros(st: NewtonStructure, dtype=float) -> BandedLU:
    """A factorization of zeros with the shapes `factor` gives for `st`: an initial value for
    a factorization kept in a loop carry (solving with it gives zeros)."""
    s, N, nb = st.block, st.nblocks * st.block, len(st.border)
    z = lambda *shape: jnp.zeros(shape, dtype)
    return BandedLU(z(st.nblocks, 2 * s, 2 * s), z(st.nblocks, s, 2 * s), z(N, nb), z(nb, N), z(nb, nb), st)


def solve(F: BandedLU, r: Float[Array, " n"]) -> Float[Array, " n"]:
    """$J^{-1} r$."""
    st = F.structure
    na, N = len(st.order), st.nblocks * st.block
    u = _solve_band(F.transforms, F.upper, jnp.pad(r[np.asarray(st.order)], (0, N - na)))
    if st.border:
        y = F.schur_inverse @ (r[np.asarray(st.border)] - F.row @ u)
        u = u - F.solved_col @ y
    else:
        y = jnp.zeros((0,), u.dtype)
    return jnp.concatenate([u[:na], y])[st._inverse]


def solve_transpose(F: BandedLU, r: Float[Array, " n"]) -> Float[Array, " n"]:
    """$J^{-T} r$ (reverse mode): the transpose of the linear map `solve(F, .)`."""
    return jax.linear_transpose(lambda b: solve(F, b), r)(r)[0]


def linear_solve(J: BandedMatrix, b: Float[Array, " n"]) -> Float[Array, " n"]:
    """$J^{-1} b$, differentiable in `J` and `b` (derivatives from the matrix-vector
    product; the factorization is reused for the tangent and transposed solves)."""
    F = factor(jax.lax.stop_gradient(J))
    return jax.lax.custom_linear_solve(
        lambda x: matvec(J, x), b, solve=lambda _, r: solve(F, r), transpose_solve=lambda _, r: solve_transpose(F, r)
    )


# -- the block-tridiagonal kernels -------------------------------------------------------------
def _factor_band(blocks):
    """`(G, W)` of the band stored as block rows `blocks[k] = A[k, k-1:k+2]` (module docstring)."""
    s, dtype = blocks.shape[1], blocks.dtype
    # an identity block row after the last: the last step's panel has 2s rows like the others
    # (its rows are zero in the columns eliminated, so they are never pivots)
    tail = jnp.concatenate([jnp.zeros((s, s), dtype), jnp.eye(s, dtype=dtype), jnp.zeros((s, s), dtype)], axis=1)
    rows = jnp.arange(2 * s)
    eye = jnp.eye(2 * s, dtype=dtype)

    def pivot(j, carry):
        M, used, order = carry
        col = jax.lax.dynamic_index_in_dim(M, j, axis=1, keepdims=False)
        p = jnp.argmax(jnp.where(used, -1.0, jnp.abs(col)))
        at_p = rows == p
        pivot_row = M[p] / col[p]
        # one rank-1 update zeroes column j in every row but p and scales row p
        M = M - (col - at_p.astype(dtype))[:, None] * pivot_row[None, :]
        return M, used | at_p, order.at[j].set(p)

    def step(carried, block_row):
        panel = jnp.concatenate([jnp.concatenate([carried, jnp.zeros((s, s), dtype)], axis=1), block_row])
        start = (jnp.concatenate([panel, eye], axis=1), jnp.zeros(2 * s, bool), jnp.zeros(s, int))
        M, used, order = jax.lax.fori_loop(0, s, pivot, start, unroll=min(s, UNROLL))
        rest = jnp.argsort(used, stable=True)[:s]  # the rows that held no pivot, in their order
        top, bottom = M[order], M[rest]
        G = jnp.concatenate([top[:, 3 * s :], bottom[:, 3 * s :]])
        return bottom[:, s : 3 * s], (G, top[:, s : 3 * s])

    xs = jnp.concatenate([blocks[1:], tail[None]])
    _, (G, W) = jax.lax.scan(step, blocks[0, :, s:], xs)
    return G, W


def _solve_band(G, W, b):
    """$A^{-1} b$ from `_factor_band`'s `(G, W)`; `b` padded to whole blocks."""
    k, s, _ = W.shape
    bb = jnp.reshape(jnp.concatenate([b, jnp.zeros((s,), b.dtype)]), (k + 1, s))

    def forward(carried, xs):
        g, b_next = xs
        v = g @ jnp.concatenate([carried, b_next])
        return v[s:], v[:s]

    _, y = jax.lax.scan(forward, bb[0], (G, bb[1:]))

    def backward(after, xs):
        w, y_k = xs
        x_k = y_k - w @ after
        return jnp.concatenate([x_k, after[:s]]), x_k

    _, x = jax.lax.scan(backward, jnp.zeros((2 * s,), b.dtype), (W, y), reverse=True)
    return jnp.reshape(x, (-1,))
