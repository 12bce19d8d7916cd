r"""Generalized-α for index-3 DAEs (Arnold & Brüls 2007; Chung & Hulbert 1993).

Per step $t_n \to t_{n+1} = t_n + h$ the unknowns are the accelerations
$\ddot q_{n+1}$ and multipliers $\lambda_{n+1}$ of

$$M(q_{n+1})\ddot q_{n+1} + \Phi_q^T(q_{n+1})\lambda_{n+1} = Q(q_{n+1}, \dot q_{n+1}, t_{n+1}),
\qquad \Phi(q_{n+1}, t_{n+1}) = 0,$$

with the pseudo-acceleration $a$ and the Newmark formulas
$(1-\alpha_m) a_{n+1} + \alpha_m a_n = (1-\alpha_f)\ddot q_{n+1} + \alpha_f \ddot q_n$,
$q_{n+1} = q_n + h\dot q_n + h^2(\tfrac12-\beta) a_n + h^2\beta a_{n+1}$,
$\dot q_{n+1} = \dot q_n + h(1-\gamma) a_n + h\gamma a_{n+1}$.
From the spectral radius at infinity $\rho_\infty \in [0, 1]$:
$\alpha_m = \frac{2\rho_\infty-1}{\rho_\infty+1}$, $\alpha_f = \frac{\rho_\infty}{\rho_\infty+1}$,
$\gamma = \tfrac12 + \alpha_f - \alpha_m$, $\beta = \tfrac14(\gamma+\tfrac12)^2$.

The constraint rows are divided by $\beta' h^2$, $\beta' = \beta(1-\alpha_f)/(1-\alpha_m)$,
so that the Newton matrix $\approx [M,\ \Phi_q^T;\ \Phi_q,\ 0]$ stays well conditioned as
$h \to 0$. The Newton strategy is a field (`flexjax.solvers.newton`): by default the
exact Jacobian of the residual (forward-mode autodiff) is formed when the measured
contraction says it pays and kept across iterations and steps otherwise
(`KeptNewton`); `newton="full"` forms it at every iteration (`FullNewton`).

Gradients: forward and reverse mode differentiate each step's *solution* by the
implicit function theorem ($dx = -R_x^{-1} R_p\, dp$) instead of unrolling the
iterations; this is exact at the converged point and costs one extra linear solve per
step (`flexjax.solvers._implicit.implicit_root`: with a kept matrix, its tangent solves
start from it and refine on the measured error; with full Newton the tangent matrix
is formed and factored; with `redundant`, `jax.lax.custom_root` and least squares).
"""

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import is_concrete
from . import _dense as dense, _structure as structure
from ._batching import batch_linearized, batch_mean, max_abs
from ._implicit import implicit_root
from .base import AbstractDAESolver, AbstractDAEState, StepInfo
from .newton import (
    AbstractNewton,
    FullNewton,
    Increment,
    KeptMatrix,
    KeptNewton,
    factorize,
    kept_kind,
    linear_solve,
)


class GAState(AbstractDAEState):
    r"""Loop state: the declared `q, v, qdd, lam, z` (`AbstractDAEState`), the
    pseudo-accelerations `a` of the Newmark formulas, and what the Newton strategy keeps
    between steps (`kept`: a `newton.KeptMatrix` for `KeptNewton`; `FullNewton` keeps
    nothing, `None`)."""

    q: Float[Array, " nq"]
    v: Float[Array, " nq"]
    a: Float[Array, " nq"]
    qdd: Float[Array, " nq"]
    lam: Float[Array, " m"]
    z: tuple = ()
    kept: KeptMatrix | None = None

    def held(self, healthy, new):
        """`AbstractDAEState.held`, with the kept matrix taken from `new`: it steers only
        its own sample's Newton iterations, and a sample that is not healthy takes none
        (its matrix is not formed again; a shared one it no longer reads), so no `where`
        copies the batch's matrices every step."""
        held = super().held(healthy, new)
        return held if new.kept is None else eqx.tree_at(lambda s: s.kept, held, new.kept)


def consistent_accelerations(system, q, v, t, least_squares: bool = False, Phi_q=None):
    r"""Solve $[M\ \Phi_q^T; \Phi_q\ 0][\ddot q; \lambda] = [Q; \gamma]$ (index-1 form);
    `Phi_q`: $\Phi_q(q, t)$ where the caller has it."""
    M = system.mass(q)
    Phi_q = system.constraints_q(q, t) if Phi_q is None else Phi_q
    m = Phi_q.shape[0]
    K = jnp.block([[M, Phi_q.T], [Phi_q, jnp.zeros((m, m), q.dtype)]])
    rhs = jnp.concatenate([system.forces(q, v, t), system.gamma(q, v, t)])
    x = linear_solve(K, rhs, least_squares)
    return x[: q.shape[0]], x[q.shape[0] :]


class GeneralizedAlpha(AbstractDAESolver):
    r"""Generalized-α integrator for $M\ddot q + \Phi_q^T\lambda = Q$, $\Phi = 0$ (index 3).

    **Arguments:**

    - `rho_inf`: spectral radius at infinity, in [0, 1] (1: no numerical damping,
      energy-conserving for linear problems; smaller values damp high frequencies).
      A pytree leaf: differentiable and batchable.
    - `rtol`, `atol`: Newton stops when its increment, expressed as a position change
      (see `_newton`), is below `atol + rtol * max|q|` (m for translations).
    - `max_iter`: Newton iteration cap per step; exceeding it marks the step failed.
    - `index2`: use the stabilized index-2 (Gear-Gupta-Leimkuhler) form: the
      velocity constraint $\Phi_q\dot q + \Phi_t = 0$ is enforced too, with an extra
      multiplier $\mu$ that corrects the positions, $q_{n+1} \mathrel{+}= \Phi_q^T(q_n)\mu$
      (Arnold, Cardona & Brüls 2016). With $\rho_\infty = 1$ the plain index-3 method is
      the trapezoidal rule, which is weakly unstable on index-3 constraints (Cardona &
      Géradin 1989): the velocity-level violation and the multipliers oscillate at
      period $2h$ and grow. Use $\rho_\infty < 1$ (damps that mode) or `index2=True`.
    - `redundant`: solve the Newton systems by least squares (SVD, minimum norm) so that
      a rank-deficient $\Phi_q$ (redundant constraints, e.g. a parallelogram loop with
      more joints than it needs) is handled: the accelerations and positions are unique,
      the multipliers are the minimum-norm ones (only their combination $\Phi_q^T\lambda$
      is defined). Costs an SVD per Newton iteration instead of an LU solve.
    - `newton`: the Newton strategy (`flexjax.solvers.newton`). `"auto"` (default, also
      `"modified"`): `KeptNewton`, the inverse Newton matrix kept across iterations *and
      steps* and formed anew only when the measured contraction says it pays: when it
      is missing, when an increment shrank by less than `contraction_max` relative to
      the previous one, when the measured rate predicts no convergence within
      `max_iter`, or after `reuse_iterations` iterations of one step without a new
      one. An
      iteration with a kept matrix costs one residual evaluation and one matrix-vector
      product. Convergence is then linear with the measured rate $\theta$, and the
      scaled error tested is $\max(1, \theta/(1-\theta))$ times the increment.
      Under `vmap` each sample keeps its own matrix and makes its own decisions; a
      new matrix is formed by each sample that asks for one, on its own (the others
      keep theirs), so a sample's iterates are those of its own run.
      `"full"` (`FullNewton`): a new matrix at every iteration (quadratic
      convergence). An `AbstractNewton` instance may be passed instead of a name.
      Results agree to the Newton tolerance, and gradients are the same (implicit
      differentiation at the converged point uses the exact Jacobian either way).
    - `contraction_max`, `reuse_iterations`: the refresh rules of the kept matrix.
    - `tangent_refinements`: with a kept matrix, the linear solves of implicit
      differentiation ($R_x\,dx = b$ in forward mode, $R_x^T\bar b = \bar x$ in
      reverse mode) start from the inverse $P$ kept at the end of the step's Newton
      solve and take up to this many refinement steps
      $dx \leftarrow dx + P(b - R_x dx)$, each one application of the linearized
      residual, instead of forming $R_x$ by autodiff and factoring it. They stop
      when the estimated error is below $10^{-13}$ relative; if the first step shows
      that this cannot be reached in time, or it was not, the exact matrix is formed
      and factored instead (`flexjax.solvers._implicit.refined_solve`). `0` always
      forms the exact matrix. Not used with `redundant` (a singular $R_x$).
    - `shared_matrix`: with a kept matrix, under `vmap` form one Newton matrix for the
      whole batch instead of one per sample: the residual's Jacobian $\bar J$ at the
      batch's mean sample (mean of every batched parameter and state; mean-based
      preconditioning, Powell & Elman 2009) together with its derivative $J'$ along
      the batch's principal direction of parameter deviation (the batched
      floating-point arrays of the `System`, standardized; `batch_linearized`), both
      formed once. Sample $i$, at coordinate $t_i$ along that direction, steps with
      $(\bar J + t_i J')^{-1} \approx \bar J^{-1} - t_i \bar J^{-1} J' \bar J^{-1}$:
      one matrix product for the whole batch. Each sample still iterates on its own
      residual to the same tolerance, so the results are those of per-sample matrices
      to the Newton tolerance. The first-order correction removes most of the mismatch
      that grows with a sample's distance from the mean (the contraction rate of the
      mean matrix alone is about the relative spread of the stiffness), while a new
      matrix costs one formation (with its directional derivative) per batch instead
      of one per sample (measurements: docs/performance.md). For batches of similar samples (parameter
      sweeps, uncertainty analysis); a sample too far from the mean for the kept
      matrix to contract fails its step (`max_iter`), and `simulate` then takes that
      step again with a matrix of each sample's own (`coupled=False`): only a sample
      that fails on its own is marked failed. A failed sample is left out of the
      matrix from then on (`healthy`), so that it never changes another sample's
      result. Under `run_batch` each device shares its own matrix. Without `vmap` it
      changes nothing.
    - `corotate`: with a kept matrix, rotate the kept matrix with the system. When the
      coordinates come in $(x, y)$ pairs that turn together under a rigid rotation of
      the system and the constraint rows come in pairs that turn with them (planar
      ANCF beams: constant isotropic mass matrix, objective elastic forces, constant
      gravity; pins and revolute joints between points, $\Phi = r_i - r_j$), the
      Newton matrix obeys $J(Tq) = T J(q) T^T$ exactly, $T$ rotating every pair by one
      angle. A body that swings without deforming much therefore keeps nearly the
      same matrix *in a frame that turns with it*: at the start of each step the kept
      inverse is turned, $J_0^{-1} \leftarrow T J_0^{-1} T^T$, with $T$ the
      least-squares rotation about the origin (`newton.rotation`) from the position it refers
      to (where it was formed, or the previous step's prediction) to this step's
      predicted position, which it then refers to; with `shared_matrix` both are the
      batch's mean positions (`batch_mean`); measured savings are in
      docs/performance.md. Turning costs about one matrix-vector product per step: on a beam
      whose deformation changes its matrix
      more than its rotation does (the very flexible pendulum of the peer benchmark)
      it only adds that. The refresh rules are unchanged, so a poor fit (a pivot far from the
      origin, large deformations, constraint rows that are invariant scalars such as
      a bar length) only costs iterations and refreshes, never accuracy. Needs an
      even number of coordinates and of constraint rows.
    """

    rho_inf: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.9)
    rtol: float = eqx.field(static=True, default=1e-10)
    atol: float = eqx.field(static=True, default=1e-12)
    max_iter: int = eqx.field(static=True, default=20)
    index2: bool = eqx.field(static=True, default=False)
    redundant: bool = eqx.field(static=True, default=False)
    newton: str | AbstractNewton = eqx.field(static=True, default="auto")
    contraction_max: float = eqx.field(static=True, default=0.5)
    reuse_iterations: int = eqx.field(static=True, default=6)
    tangent_refinements: int = eqx.field(static=True, default=8)
    shared_matrix: bool = eqx.field(static=True, default=False)
    corotate: bool = eqx.field(static=True, default=False)
    order: ClassVar[int] = 2

    def __check_init__(self):
        if jnp.shape(self.rho_inf) != ():
            raise ValueError(f"GeneralizedAlpha: `rho_inf` must be a scalar, got shape {jnp.shape(self.rho_inf)}.")
        if is_concrete(self.rho_inf) and not (0.0 <= float(self.rho_inf) <= 1.0):
            raise ValueError(f"GeneralizedAlpha: `rho_inf` must lie in [0, 1], got {float(self.rho_inf)}.")
        if not (self.max_iter >= 1 and 0 < self.rtol < math.inf and 0 < self.atol < math.inf):
            raise ValueError(
                "GeneralizedAlpha: need max_iter >= 1 and positive, finite rtol and atol, got "
                f"max_iter={self.max_iter}, rtol={self.rtol}, atol={self.atol}."
            )
        if not (self.newton in ("auto", "modified", "full") or isinstance(self.newton, AbstractNewton)):
            raise ValueError(
                "GeneralizedAlpha: `newton` must be 'auto', 'modified', 'full' or an AbstractNewton, "
                f"got {self.newton!r}."
            )
        if not 0.0 < self.contraction_max < 1.0 or self.reuse_iterations < 1:
            raise ValueError("GeneralizedAlpha: need 0 < contraction_max < 1 and reuse_iterations >= 1.")
        kept = isinstance(self.strategy, KeptNewton)
        if self.shared_matrix and not kept:
            raise ValueError("GeneralizedAlpha: `shared_matrix=True` needs a kept Newton matrix (newton='auto').")
        if self.corotate and not kept:
            raise ValueError("GeneralizedAlpha: `corotate=True` needs a kept Newton matrix (newton='auto').")
        if self.tangent_refinements < 0:
            raise ValueError(f"GeneralizedAlpha: `tangent_refinements` must be >= 0, got {self.tangent_refinements}.")

    @property
    def couples_samples(self) -> bool:
        """With `shared_matrix`, a sample's iterates depend on the batch's matrix."""
        return self.shared_matrix

    @property
    def strategy(self) -> AbstractNewton:
        """The Newton strategy that `newton` names (see `flexjax.solvers.newton`)."""
        if isinstance(self.newton, AbstractNewton):
            return self.newton
        if self.newton == "full":
            return FullNewton()
        return KeptNewton(self.contraction_max, self.reuse_iterations, self.shared_matrix)

    def coefficients(self):
        """$(\\alpha_m, \\alpha_f, \\gamma, \\beta)$ from $\\rho_\\infty$ (Chung-Hulbert)."""
        r = self.rho_inf
        alpha_m = (2 * r - 1) / (r + 1)
        alpha_f = r / (r + 1)
        gamma = 0.5 + alpha_f - alpha_m
        beta = 0.25 * (gamma + 0.5) ** 2
        return alpha_m, alpha_f, gamma, beta

    def init(self, system, t0, q0, v0, Phi_q=None) -> GAState:
        """State at `t0` with consistent accelerations and multipliers (`Phi_q`: the
        constraint Jacobian at `q0`, if the caller has it)."""
        qdd, lam = consistent_accelerations(system, q0, v0, t0, self.redundant, Phi_q)
        if self.corotate and (q0.shape[0] % 2 or lam.shape[0] % 2):
            raise ValueError(
                "GeneralizedAlpha: `corotate=True` needs (x, y) pairs: an even number of coordinates "
                f"and of constraint rows, got {q0.shape[0]} and {lam.shape[0]}."
            )
        n = q0.shape[0] + lam.shape[0] * (2 if self.index2 else 1)
        st = self._structure(system)
        kind = kept_kind(n, self.shared_matrix or self.corotate or self.redundant, st)
        kept = self.strategy.init(n, q0.dtype, kind, st)
        if self.corotate:
            kept = eqx.tree_at(lambda k: k.ref, kept, self._frame_position(q0, True, True), is_leaf=lambda v: v is None)
        return GAState(q=q0, v=v0, a=qdd, qdd=qdd, lam=lam, z=system.force_states(), kept=kept)

    def step(self, system, t, h, s: GAState, healthy=True, coupled=True) -> tuple[GAState, StepInfo]:
        r"""Advance `s` from `t` to `t + h`.

        Stateful force elements are advanced first, from the converged $q_n, \dot q_n$,
        and held fixed during the Newton solve (a sampled controller, a contact memory).
        Under `vmap`, a sample that is not `healthy` (its run has failed) takes no Newton
        iteration and no part in the batch's decisions and statistics; its result is
        not converged. With `shared_matrix` and `coupled` False, every sample forms its
        own matrix in this step (stored in the shared layout, with no correction).
        """
        z = system.with_force_states(s.z).advance_force_states(s.q, s.v, t, h)
        system = system.with_force_states(z)
        alpha_m, alpha_f, gamma, beta = self.coefficients()
        nq, m = s.q.shape[0], s.lam.shape[0]
        t1 = t + h
        beta_h2 = beta * (1 - alpha_f) / (1 - alpha_m) * h**2  # dq_{n+1}/dqdd_{n+1}
        gamma_h = gamma * (1 - alpha_f) / (1 - alpha_m) * h  # dv_{n+1}/dqdd_{n+1}
        Phi_q_n = system.constraints_q(s.q, t) if self.index2 else None

        def kinematics(x):
            qdd = x[:nq]
            a1 = ((1 - alpha_f) * qdd + alpha_f * s.qdd - alpha_m * s.a) / (1 - alpha_m)
            q1 = s.q + h * s.v + h**2 * (0.5 - beta) * s.a + h**2 * beta * a1
            v1 = s.v + h * (1 - gamma) * s.a + h * gamma * a1
            if self.index2:  # GGL position correction, mu scaled by beta' h^2
                q1 = q1 + beta_h2 * Phi_q_n.T @ x[nq + m :]
            return a1, q1, v1

        def residual_of(system, x):
            qdd, lam = x[:nq], x[nq : nq + m]
            _, q1, v1 = kinematics(x)
            Phi, Phi_vjp = jax.vjp(lambda q: system.constraints(q, t1), q1)
            r_dyn = system.mass_product(q1, qdd) + Phi_vjp(lam)[0] - system.forces(q1, v1, t1)
            rows = [r_dyn, Phi / beta_h2]
            if self.index2:
                rows.append(system.constraint_velocity(q1, v1, t1) / gamma_h)
            return jnp.concatenate(rows)

        residual = lambda x: residual_of(system, x)
        x0 = jnp.concatenate([s.qdd, s.lam] + ([jnp.zeros(m, s.q.dtype)] if self.index2 else []))
        strategy = self.strategy
        kept = isinstance(strategy, KeptNewton)
        tol = self.atol + self.rtol * max_abs(s.q)
        # with a kept matrix the mass block's scale is read at the step's start
        m_bar = max_abs(jnp.diagonal(system.mass(s.q))) if kept else None
        increment = Increment(nq, m, beta_h2, tol, m_bar)
        fresh = (
            self._fresh_inverse(residual_of, system, s.kept.kind, self._structure(system), coupled) if kept else None
        )
        turn = None
        if self.corotate:
            position = lambda x, ok: self._frame_position(kinematics(x)[1], ok, coupled)
            turn = (position, position(x0, healthy))

        def newton(f, x):
            x, result = strategy.solve(f, x, increment, self.max_iter, s.kept, fresh, turn, self.redundant, healthy)
            P = result.kept.preconditioner(x.shape[0]) if kept else jnp.zeros((0, 0), x.dtype)
            return x, P, result

        if not self.redundant:
            # tangent solves preconditioned by the inverse kept at the step's end (none
            # kept: zero refinements, the exact matrix); unlike custom_root, nothing of
            # the derivative is traced unless differentiated
            x, _, result = implicit_root(residual, x0, newton, self.tangent_refinements if kept else 0)
        else:
            # aux must be floating point: custom_root's JVP rule gives aux float tangents
            x, result = jax.lax.custom_root(
                residual, x0, lambda f, x: _drop_p(newton(f, x)), self._tangent_solve, has_aux=True
            )
        qdd, lam = x[:nq], x[nq : nq + m]
        a1, q1, v1 = kinematics(x)
        info = StepInfo(result.error <= 1.0, result.error, result.iterations.astype(int), result.jacobians.astype(int))
        # the kept matrix only steers Newton: no derivative
        kept_next = jax.lax.stop_gradient(result.kept) if kept else None
        return GAState(q=q1, v=v1, a=a1, qdd=qdd, lam=lam, z=z, kept=kept_next), info

    def _structure(self, system):
        """The banded structure of the Newton matrix from the system's declared layout
        (`structure.newton_structure`), or None (dense) where it would not pay or where a
        least-squares solve is needed."""
        return None if self.redundant else structure.newton_structure(system, self.index2)

    def _fresh_inverse(self, residual_of, system, kind, st=None, coupled=True):
        """`(x, ok) -> (factor, coord)`, a new kept matrix at `x` (`newton.KeptMatrix`): the
        Newton matrix `jacfwd(residual_of(system, .))` stored as `kind` (its transposed
        inverse or pseudo-inverse, or its LU factors), or with `shared_matrix` the
        batch's linearized inverse (`batch_linearized` along the floating-point arrays of
        `system`, from the samples where `ok`), unless not `coupled`. Transposed because
        `r @ M` is a faster batched product than `r @ M.T` on CPU (no transposing copy per
        iteration)."""
        inverse = jnp.linalg.pinv if self.redundant else dense.inverse
        if not self.shared_matrix:
            if self.redundant:
                return lambda x, ok: ((inverse(jax.jacfwd(lambda y: residual_of(system, y))(x).T),), None)
            if kind == "banded":  # coloured forward passes, about 2 x bandwidth instead of n
                return lambda x, ok: (
                    factorize(structure.jacobian(lambda y: residual_of(system, y), x, st), kind),
                    None,
                )
            return lambda x, ok: (factorize(jax.jacfwd(lambda y: residual_of(system, y))(x), kind), None)
        params, rest = eqx.partition(system, eqx.is_inexact_array)
        jacobian = lambda x, p: jax.jacfwd(lambda y: residual_of(eqx.combine(p, rest), y))(x)

        def shared(x, ok):
            J, dJ, coord = batch_linearized(jacobian, params, ok)(x)
            Jinv_t = inverse(J.T)
            return (jnp.concatenate([Jinv_t, Jinv_t @ dJ.T @ Jinv_t], axis=1),), coord

        def alone(x, ok):  # the sample's own matrix, in the shared layout: no correction
            Jinv_t = inverse(jax.jacfwd(lambda y: residual_of(system, y))(x).T)
            return (jnp.concatenate([Jinv_t, jnp.zeros_like(Jinv_t)], axis=1),), jnp.zeros((), x.dtype)

        if coupled is True:
            return shared
        return lambda x, ok: jax.lax.cond(coupled, shared, alone, x, ok)

    def _frame_position(self, q, ok, coupled):
        """The position a kept matrix is referred to with `corotate`: the sample's own, or
        with `shared_matrix` (and `coupled`) the batch's mean (`batch_mean`) over the
        samples where `ok`, whose matrix it is."""
        if not self.shared_matrix:
            return q
        return batch_mean(q, ok) if coupled is True else jnp.where(coupled, batch_mean(q, ok), q)

    def _tangent_solve(self, g, y):
        # g is the linearized residual at the solution; its matrix is the Newton matrix
        return linear_solve(jax.jacfwd(g)(y), y, self.redundant)


def _drop_p(solved):
    x, _, result = solved
    return x, result
