r"""Implicit differentiation of a Newton solve that keeps an approximate inverse.

`implicit_root(residual, x0, solve, refinements)` returns the root $x^*$ of
`residual` found by `solve`, differentiated by the implicit function theorem,
$R_x\,dx = -R_p\,dp$, instead of through the iterations. Unlike
`jax.lax.custom_root` it

- linearizes the residual once at $x^*$, jointly in $x$ and in the closed-over values
  that carry a derivative (`custom_root` linearizes twice: once in the parameters,
  once in $x$);
- solves $R_x\,dx = b$ (forward mode) and $R_x^T\bar b = \bar x$ (reverse mode) with
  the approximate inverse $P$ that `solve` returns (the Newton matrix it kept, close
  to $R_x^{-1}$ at $x^*$) and refinement steps that stop on the measured error
  (`refined_solve`); the exact matrix is formed and factored only when they do not
  get there.

Reverse mode therefore costs one linearization and, with a good $P$, two or three
applications of the transposed linearization per solve.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from . import _dense as dense
from ._batching import batch_any, hoisted, max_abs

ERROR_RTOL = 1e-13  # accepted estimated error |x - x*|_inf / |x|_inf of `refined_solve`


def refined_solve(A, b, P, refinements: int):
    r"""$x$ with $A(x) = b$ for the linear map `A`, from the approximate inverse `P`.

    Starts from $x_0 = Pb$ and takes up to `refinements` steps
    $x \leftarrow x + \delta$, $\delta = P(b - A x)$, each one application of `A`.
    The corrections shrink by the spectral radius $\rho$ of $I - PA$ per step,
    estimated as $\|\delta_k\|/\|\delta_{k-1}\|$ ($\|\delta_0\|/\|x_0\|$ at first),
    so the error left after adding $\delta_k$ is about $\rho\|\delta_k\|$; the
    iteration stops once that is below `ERROR_RTOL` $\|x\|$ (max norms). When the
    first estimate of $\rho$ says that this cannot be reached within `refinements`
    steps, or it was not reached, the matrix of `A` is formed (autodiff, one column
    per unknown) and factored instead: for the whole batch under `vmap`.
    `refinements = 0` always does that.

    The result depends (to rounding) nonlinearly on `b` through these choices, so it
    is used as the `solve` of `jax.lax.custom_linear_solve`, whose transpose is another
    solve, not the transpose of this one.
    """

    def exact():
        return dense.solve(jax.jacfwd(A)(b), b)

    if refinements == 0:
        return exact()
    norm = max_abs
    ratio = lambda num, den: jnp.where(num == 0, 0.0, num / den)  # 0/0 = 0; c/0 = inf
    nonzero = norm(b) > 0  # else x = 0 is the answer; a zero x0 = P b is not one
    done = lambda x, d, rate: (norm(d) * jnp.minimum(rate, 1.0) <= ERROR_RTOL * norm(x)) & ((norm(x) > 0) | ~nonzero)
    apply = P.apply if hasattr(P, "apply") else (lambda r: r @ P.T)  # r on the left: batched, samples as rows
    x = apply(b)
    d = apply(b - A(x))
    rate = ratio(norm(d), norm(x))
    reachable = rate <= ERROR_RTOL ** (1.0 / (refinements + 1))

    def cond(c):
        x, d, rate, k = c
        return batch_any(reachable & (k < refinements) & ~done(x, d, rate))

    def body(c):
        x, d, rate, k = c
        x = x + d
        d_new = apply(b - A(x))
        return x, d_new, ratio(norm(d_new), norm(d)), k + 1

    x, d, rate, _ = jax.lax.while_loop(cond, body, (x, d, rate, jnp.array(0)))
    return jax.lax.cond(batch_any(~done(x, d, rate)), exact, lambda: x + d)


def _zero_tangent(value):
    """A zero tangent of `value`: `float0` for integer and boolean arrays (LU pivots)."""
    if jnp.issubdtype(jnp.result_type(value), jnp.inexact):
        return jnp.zeros_like(value)
    return np.zeros(np.shape(value), dtype=jax.dtypes.float0)


def implicit_root(residual, x0, solve, refinements: int):
    r"""The root of `residual` found by `solve(residual, x0) -> (x, P, aux)`, with
    derivatives by the implicit function theorem.

    `P` is an approximate inverse of the Jacobian $R_x$ at `x`, a matrix or an object
    with `apply(b)` and `T` (`flexjax.solvers.newton.Preconditioner`; e.g. the Newton matrix
    kept by a modified Newton method); `aux` is any pytree of floating-point
    diagnostics. Returns `(x, P, aux)`; `P` and `aux` have zero derivatives. Both
    tangent solves use `refined_solve(..., refinements)` with `P` (`P^T` in reverse
    mode).
    """
    res_fn, res_consts = hoisted(residual, x0)
    # the solve evaluates the residual's jaxpr: the model's Python code is traced once
    solve_fn, solve_consts = hoisted(lambda x: solve(lambda y: res_fn(res_consts, y), x), x0)

    @jax.custom_jvp
    def root(x0, rc, sc):
        return solve_fn(sc, x0)

    def root_jvp(primals, tangents):
        x0, rc, sc = primals
        _, drc, _ = tangents
        x, P, aux = solve_fn(sc, x0)
        P = jax.lax.stop_gradient(P)
        # only the closed-over values that carry a derivative (symbolic zeros elsewhere)
        moving = [
            not isinstance(t, SymbolicZero) and jnp.issubdtype(jnp.result_type(c), jnp.inexact)
            for c, t in zip(rc, drc, strict=True)
        ]

        def f(x, *diff):
            it = iter(diff)
            return res_fn([next(it) if mv else c for c, mv in zip(rc, moving, strict=True)], x)

        # one linearization in x and the moving values together: cheaper than
        # separate ones (custom_root's way), although rhs and matvec each feed zeros
        diff = [c for c, mv in zip(rc, moving, strict=True) if mv]
        _, f_lin = jax.linearize(f, x, *diff)
        zeros = [jnp.zeros_like(c) for c in diff]
        rhs = f_lin(jnp.zeros_like(x), *[t for t, mv in zip(drc, moving, strict=True) if mv])
        matvec = lambda v: f_lin(v, *zeros)
        if refinements == 0:
            # the exact matrix, formed from the forward linearization; the transposed
            # solve (reverse mode) reuses it instead of forming the transposed map's
            dx = -dense.solve(jax.jacfwd(matvec)(jnp.zeros_like(x)), rhs)
        else:
            dx = -jax.lax.custom_linear_solve(
                matvec,
                rhs,
                solve=lambda A, b: refined_solve(A, b, P, refinements),
                transpose_solve=lambda At, b: refined_solve(At, b, P.T, refinements),
            )
        zero_like = lambda t: jax.tree_util.tree_map(_zero_tangent, t)
        return (x, P, aux), (dx, zero_like(P), zero_like(aux))

    root.defjvp(root_jvp, symbolic_zeros=True)
    return root(x0, res_consts, solve_consts)
