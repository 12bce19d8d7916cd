r"""Natural frequencies and mode shapes of a constrained system linearized at a state.

At a state $(q, \dot q, t)$ the accelerations and multipliers follow from
$M\ddot q + \Phi_q^T\lambda = Q$, $\Phi_q\ddot q = \gamma$. Holding $\dot q$, $\ddot q$ and
$\lambda$ fixed, a small displacement $\delta q$ changes the residual
$R(q) = M(q)\,\ddot q + \Phi_q(q)^T\lambda - Q(q, \dot q, t)$ by $K\,\delta q$, the tangent
stiffness $K = \partial R/\partial q$ (elastic, applied-load and geometric terms; the
$\lambda$ term gives, e.g., the gravity stiffness of a pendulum). Admissible
displacements lie in the null space of $\Phi_q$: with a basis $N$ ($\Phi_q N = 0$) the
reduced pencil $(N^T K N,\ N^T M N)$ gives $\omega^2$ and the mode shapes $\delta q = N x$.
Damping and gyroscopic terms ($\partial Q/\partial \dot q$) are left out: these are the
undamped natural frequencies. $K$ is symmetrized (non-conservative loads such as follower
forces make it non-symmetric; their flutter needs a complex eigenanalysis).

**Derivatives.** The basis is $N = (I - \Phi_q^+\Phi_q)\,N_0$ with $N_0$ from a singular
value decomposition held constant: it spans the null space of the current $\Phi_q$, so
derivatives of the frequencies with respect to any parameter (through $q$, the system or
$t$) are exact. Derivatives of repeated frequencies (several rigid-body modes, symmetric
structures) are undefined, as for any eigenvalue.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import is_concrete
from .._gc import gc_paused
from .._structural import structural
from ..system import System, _min_norm_step

RIGID_TOL = 1e-11  # |omega^2| below this fraction of the largest |omega^2| counts as a rigid-body mode


class Modes(eqx.Module):
    r"""Result of `modes`, modes in ascending order of $\omega^2$.

    - `frequencies`: natural frequencies $f = \omega / 2\pi$ (Hz); exactly 0 for rigid-body
      modes; negative, $-\sqrt{-\omega^2}/2\pi$, for an unstable direction (e.g. an
      inverted pendulum).
    - `omega_squared`: the eigenvalues $\omega^2$ (rad²/s²), signed, before the rigid-mode
      zeroing.
    - `shapes`: mode shapes in the full coordinates, one per column, mass-normalized
      ($\Phi^T M \Phi = I$) and satisfying $\Phi_q\,\Phi = 0$.
    """

    frequencies: Float[Array, " k"]
    omega_squared: Float[Array, " k"]
    shapes: Float[Array, "nq k"]


def _rank(system: System, q, t) -> int:
    """Rank of $\\Phi_q$: numerical when the arguments are concrete, else the row count."""
    if system.nconstraints == 0:
        return 0
    leaves = jax.tree_util.tree_leaves(eqx.filter((system, q, t), eqx.is_array))
    if not all(is_concrete(x) for x in leaves):
        return system.nconstraints  # under a transformation: assume independent rows
    Phi_q = np.asarray(_constraints_q(system, q, t))
    return int(np.linalg.matrix_rank(Phi_q))


@eqx.filter_jit
def _constraints_q(system, q, t):
    return system.constraints_q(q, t)


def _null_space(Phi_q, rank: int, nq: int):
    """Orthonormal-at-the-primal basis of the null space of $\\Phi_q$ (module docstring)."""
    if Phi_q.shape[0] == 0:
        return jnp.eye(nq, dtype=Phi_q.dtype)
    _, _, vt = jnp.linalg.svd(jax.lax.stop_gradient(Phi_q), full_matrices=True)
    N0 = vt[rank:].T
    return N0 - _min_norm_step(Phi_q, Phi_q @ N0)


@eqx.filter_jit
def _modes(system: System, q, v, t, rank: int, n: int, rigid_tol: float) -> Modes:
    M = system.mass(q)
    Q = system.forces(q, v, t)
    Phi_q = system.constraints_q(q, t)
    N = _null_space(Phi_q, rank, system.nq)
    M_r = N.T @ M @ N
    # state accelerations and multipliers: a = a_p + N y, Phi_q^T lam = Q - M a
    a_p = _min_norm_step(Phi_q, system.gamma(q, v, t)) if system.nconstraints else jnp.zeros_like(q)
    a = a_p + N @ jnp.linalg.solve(M_r, N.T @ (Q - M @ a_p))
    if system.nconstraints:
        JJ = Phi_q @ Phi_q.T
        eps = 1e-14 * jnp.max(jnp.abs(jnp.diagonal(JJ))) + jnp.finfo(q.dtype).tiny
        lam = jnp.linalg.solve(JJ + eps * jnp.eye(JJ.shape[0], dtype=q.dtype), Phi_q @ (Q - M @ a))
    else:
        lam = jnp.zeros((0,), q.dtype)

    def residual(qq):
        return system.mass(qq) @ a + system.constraints_q(qq, t).T @ lam - system.forces(qq, v, t)

    K = jax.jacfwd(residual)(q)
    K_r = N.T @ (0.5 * (K + K.T)) @ N
    L = jnp.linalg.cholesky(0.5 * (M_r + M_r.T))
    Linv_K = jax.scipy.linalg.solve_triangular(L, K_r, lower=True)
    A = jax.scipy.linalg.solve_triangular(L, Linv_K.T, lower=True)  # L^-1 K_r L^-T
    w, X = jnp.linalg.eigh(0.5 * (A + A.T))
    shapes = N @ jax.scipy.linalg.solve_triangular(L.T, X, lower=False)
    rigid = (jnp.abs(w) <= rigid_tol * jnp.max(jnp.abs(w), initial=0.0))[:n]
    w, shapes = w[:n], shapes[:, :n]
    # the where on a safe value keeps the derivative of sqrt finite at rigid modes
    root = jnp.sqrt(jnp.abs(jnp.where(rigid, 1.0, w)))
    freqs = jnp.where(rigid, 0.0, jnp.sign(w) * root) / (2 * jnp.pi)
    return Modes(freqs, w, shapes)


@gc_paused
def modes(system: System, q, t=0.0, v=None, n: int | None = None, *, rigid_tol: float = RIGID_TOL) -> Modes:
    r"""Natural frequencies (Hz) and mode shapes of `system` linearized at $(q, \dot q, t)$,
    on the constraint manifold (module `flexjax.analysis.modal`).

    Differentiable with respect to `q`, `v`, `t` and the system's parameters; `jax.vmap`
    over them works too (inside a transformation the constraint rows are assumed
    independent; outside, the rank of $\Phi_q$ is computed, so redundant constraints are
    fine).

    **Arguments:**

    - `system`: a `System` without velocity-level (nonholonomic) constraints.
    - `q`: the configuration, shape `(system.nq,)`; it should satisfy $\Phi(q, t) = 0$.
    - `t`: time (s), for rheonomic constraints and time-dependent loads.
    - `v`: velocities (default zero: linearization about rest).
    - `n`: number of lowest modes to return (default: all, `nq - rank(Phi_q)`).
    - `rigid_tol`: modes with $|\omega^2|$ below this fraction of the largest
      $|\omega^2|$ are rigid-body modes, reported with frequency 0.

    **Returns:** a `Modes` (`frequencies`, `omega_squared`, `shapes`).

    **Raises:** `ValueError` for a `q`/`v` of the wrong shape, or an `n` outside
    `1..nq - rank`; `NotImplementedError` for nonholonomic constraints.
    """
    if not isinstance(system, System):
        raise ValueError(f"modes: `system` must be a System, got {type(system).__name__}.")
    system = structural(system)  # equal models and other parameter values share programs
    if system.velocity_constraints:
        raise NotImplementedError("modes: systems with velocity-level (nonholonomic) constraints are not supported.")
    q = jnp.asarray(q, float)
    v = jnp.zeros_like(q) if v is None else jnp.asarray(v, float)
    for name, x in (("q", q), ("v", v)):
        if jnp.shape(x) != (system.nq,):
            raise ValueError(f"modes: `{name}` must have shape ({system.nq},), got {jnp.shape(x)}.")
    t = jnp.asarray(t, q.dtype)
    rank = _rank(system, q, t)
    ndof = system.nq - rank
    if ndof < 1:
        raise ValueError(f"modes: the system has no degree of freedom (nq = {system.nq}, rank of Phi_q = {rank}).")
    n = ndof if n is None else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= ndof:
        raise ValueError(f"modes: `n` must be an int in 1..{ndof} (the degrees of freedom), got {n!r}.")
    return _modes(system, q, v, t, rank, int(n), float(rigid_tol))
