r"""Static equilibrium by Newton's method with load stepping.

Unknowns $x = [q, \lambda]$, residual

$$R(x; f) = \begin{bmatrix} Q_{int}(q) + f\,Q_{ext}(q) - \Phi_q^T(q)\,\lambda \\ \Phi(q, t) \end{bmatrix} = 0,$$

with $Q_{int}$ the bodies' own forces (elastic, at $\dot q = 0$) and $Q_{ext}$ the sum of
all force elements (gravity, point forces, distributed loads, torques), evaluated at
$\dot q = 0$ and the fixed time `t`. The load factor $f$ goes from $1/n$ to $1$ in
`load_steps` equal steps; each step starts Newton from the previous solution. The
Jacobian $R_x$ is exact (`jax.jacfwd`); the iteration is the solvers' `newton.FullNewton`.

**Why scale the force elements.** Elastic forces are internal and must not be scaled;
every applied load is, which covers the common ramps (a tip load, gravity). To ramp
anything else (a prescribed displacement, one load but not another), call
`solve_static` on a sequence of systems with `load_steps=1`, passing the previous
`q` as `q0`.

**Derivatives.** Each Newton solve is wrapped in `implicit_root` (exact tangent
solves, `flexjax.solvers._implicit`), so `jax.grad`,
`jax.jvp` and `jax.vmap` give exact derivatives of the equilibrium by the implicit
function theorem, $dx = -R_x^{-1} R_p\,dp$, not by unrolling iterations.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from .._checks import check_x64, is_concrete
from .._emitter import forward_jit
from .._gc import gc_paused
from .._structural import structural
from ..results import RESULTS, code
from ..system import System
from ..trajectory import SolverError
from ._implicit import implicit_root
from .newton import FullNewton


class StaticSolution(eqx.Module):
    """Result of `solve_static`.

    - `q`, `lam`: equilibrium coordinates and constraint multipliers at full load.
    - `load_factors`: the load factors of the steps, shape `(load_steps,)`.
    - `iterations`, `error`, `residual`: per load step, Newton iterations, the last
      scaled increment (<= 1 when converged) and $\\max|R|$ at the returned point.
    - `result`: `RESULTS.successful`, or `RESULTS.static_failed` when Newton failed in
      any load step.
    """

    q: Float[Array, " nq"]
    lam: Float[Array, " m"]
    load_factors: Float[Array, " steps"]
    iterations: Int[Array, " steps"]
    error: Float[Array, " steps"]
    residual: Float[Array, " steps"]
    result: RESULTS


class _Increment(eqx.Module):
    """Newton increments measured on the coordinates: `max|dq| / tol` (<= 1 converged)."""

    nq: int = eqx.field(static=True)
    tol: Float[Array, ""]

    def __call__(self, dx, J=None):
        err = jnp.max(jnp.abs(dx[: self.nq])) / self.tol
        return jnp.where(jnp.isfinite(err), err, jnp.inf)


@forward_jit
def _solve(system, q0, t, rtol, atol, max_iter, load_steps: int) -> StaticSolution:
    """The whole solve as one program (the load factors, the steps and the result), so
    that a first call compiles it and no small programs."""
    nq = system.nq
    factors = jnp.arange(1, load_steps + 1, dtype=q0.dtype) / load_steps
    x0 = jnp.concatenate([q0, jnp.zeros(system.nconstraints, q0.dtype)])

    def residual_at(f):
        def residual(x):
            q, lam = x[:nq], x[nq:]
            Phi, Phi_vjp = jax.vjp(lambda qq: system.constraints(qq, t), q)
            v = jnp.zeros_like(q)  # forces at rest
            internal, external = system.body_forces(q, v, t), system.element_forces(q, v, t)
            return jnp.concatenate([internal + f * external - Phi_vjp(lam)[0], Phi])

        return residual

    def newton(residual, x0):  # full Newton, increments measured on q, and max |R| at x
        increment = _Increment(nq, atol + rtol * jnp.max(jnp.abs(x0[:nq])))
        x, res, r = FullNewton().solve_with_residual(residual, x0, increment, max_iter)
        return x, jnp.zeros((0, 0), x.dtype), (res.error, res.iterations, r)

    def step(x, f):
        x, _, (err, it, r) = implicit_root(residual_at(f), x, newton, 0)  # exact tangent solves
        return x, (err, it, jnp.where(jnp.isfinite(r), r, jnp.inf))

    x, (err, iters, res) = jax.lax.scan(step, x0, factors)
    return StaticSolution(
        q=x[:nq],
        lam=x[nq:],
        load_factors=factors,
        iterations=iters.astype(int),
        error=err,
        residual=res,
        result=RESULTS.where(jnp.any(~(err <= 1.0)), RESULTS.static_failed, RESULTS.successful),
    )


@gc_paused
def solve_static(
    system: System,
    q0,
    load_steps: int = 10,
    *,
    t: float = 0.0,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    max_iter: int = 50,
    throw: bool = True,
) -> StaticSolution:
    r"""Static equilibrium of `system` under its loads, reached in `load_steps` steps.

    **Arguments:**

    - `system`: the assembled `System`.
    - `q0`: initial guess, shape `(nq,)` (typically the unloaded configuration; it
      should satisfy the constraints).
    - `load_steps`: number of equal load increments (int >= 1).
    - `t`: time at which forces and constraints are evaluated.
    - `rtol`, `atol`: Newton stops when $\max|\Delta q| \le$ `atol + rtol * max|q|`.
    - `max_iter`: Newton iteration cap per load step.
    - `throw`: raise `SolverError` (naming the load step and residual) when a step
      fails; with `False` the failure is recorded in `result` (for `vmap`).

    **Returns:** a `StaticSolution`.
    """
    if not isinstance(system, System):
        raise ValueError(f"solve_static: `system` must be a System, got {type(system).__name__}.")
    if isinstance(load_steps, bool) or not isinstance(load_steps, int) or load_steps < 1:
        raise ValueError(f"solve_static: `load_steps` must be an int >= 1, got {load_steps!r}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"solve_static: `max_iter` must be an int >= 1, got {max_iter!r}.")
    check_x64("solve_static")
    if not (0 < rtol < np.inf and 0 < atol < np.inf):
        raise ValueError(f"solve_static: `rtol` and `atol` must be positive, got {rtol}, {atol}.")
    q0 = jnp.asarray(q0, float)
    if q0.shape != (system.nq,):
        raise ValueError(f"solve_static: `q0` must have shape ({system.nq},), got {q0.shape}.")
    if is_concrete(q0) and not np.isfinite(np.asarray(q0)).all():
        raise ValueError("solve_static: `q0` contains NaN or inf.")
    # structural: a rebuilt model of equal structure reuses the compiled solve
    sol = _solve(structural(system), q0, jnp.asarray(t, q0.dtype), rtol, atol, max_iter, load_steps)
    if not throw:
        return sol
    if sol.result.is_traced():
        q = sol.result.error_if(sol.q, sol.result != RESULTS.successful)
        return eqx.tree_at(lambda s: s.q, sol, q)
    if np.any(code(sol.result) != code(RESULTS.successful)):  # numpy: no small program
        from .._checks import known_values
        from .._diagnose import static_failure_causes

        sol, system, q0 = known_values((sol, system, q0))  # under `jax.grad`: their numbers
        k = int(np.argmax(~(np.asarray(sol.error) <= 1.0)))
        causes = static_failure_causes(system, q0, sol.q, t)
        raise SolverError(
            f"solve_static: Newton did not converge at load step {k + 1} of {load_steps} "
            f"(load factor {float(sol.load_factors[k]):.4g}) after {int(sol.iterations[k])} iterations: "
            f"scaled increment {float(sol.error[k]):.3e} (must be <= 1), max |residual| "
            f"{float(sol.residual[k]):.3e}; "
            + (
                "likely cause: " + "; ".join(causes) + "."
                if causes
                else "use more load steps, a better q0, or check that the structure is statically "
                "determinate (no free rigid-body motion)."
            )
        )
    return sol
