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
$h \to 0$. Newton uses the exact Jacobian of the residual (forward-mode autodiff),
either at every iteration (`newton="full"`) or kept across iterations and steps and
refreshed only when the iteration stops contracting (`newton="modified"`, see
`GeneralizedAlpha`).

Gradients: forward and reverse mode differentiate each step's *solution* by the
implicit function theorem ($dx = -R_x^{-1} R_p\, dp$) instead of unrolling the
iterations; this is exact at the converged point and costs one extra linear solve per
step. Full Newton wraps the solve in `jax.lax.custom_root` (the tangent matrix formed
and factored); modified Newton in `implicit_root` (`flexjax.solvers.implicit`), whose
tangent solves start from the matrix kept at the step's end and refine on the measured
error.
"""

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from .._checks import is_concrete
from . import dense
from .base import AbstractDAESolver
from .batching import batch_any, batch_linearized, batch_mean, max_abs, sum_last, update_where
from .implicit import implicit_root


class GAState(eqx.Module):
    r"""Loop state: positions `q`, velocities `v`, pseudo-accelerations `a`, true
    accelerations `qdd`, multipliers `lam` and the states `z` of the stateful force
    elements used in the last step (`System.force_states`). With `newton="modified"`
    also the kept inverse Newton matrix, transposed (`jac_inv_t`: the Newton step is
    `r @ jac_inv_t`), and whether it has been computed yet (`jac_valid`); `None`
    otherwise. With `shared_matrix=True`, `jac_inv_t` is
    $[\bar J^{-1};\ \bar J^{-1} J' \bar J^{-1}]^T$ (n x 2n): the batch's inverse and
    its first-order change, and `jac_coord` is the sample's coordinate $t$ along the
    batch's parameter direction (see `GeneralizedAlpha`). With `corotate=True`,
    `jac_ref` is the position the kept matrix is turned to: the last step's predicted
    position, or the one it was formed at (with `shared_matrix`, the batch's mean)."""

    q: Float[Array, " nq"]
    v: Float[Array, " nq"]
    a: Float[Array, " nq"]
    qdd: Float[Array, " nq"]
    lam: Float[Array, " m"]
    z: tuple = ()
    jac_inv_t: Float[Array, "n k"] | None = None
    jac_valid: Bool[Array, ""] | None = None
    jac_coord: Float[Array, ""] | None = None
    jac_ref: Float[Array, " nq"] | None = None


class StepInfo(eqx.Module):
    """Newton diagnostics of one step: `converged`, scaled `error` (<= 1 when
    converged), `iterations`, and `jacobians`: Newton matrices formed in the step
    (equal to `iterations` with `newton="full"`)."""

    converged: Bool[Array, ""]
    error: Float[Array, ""]
    iterations: Int[Array, ""]
    jacobians: Int[Array, ""]


def linear_solve(J, r, least_squares: bool = False):
    """`J^{-1} r` (`dense.solve`: LU, or batched Gauss-Jordan where batched LAPACK may
    hang), or with `least_squares` the minimum-norm least-squares solution (SVD;
    singular values below 1e-10 of the largest are dropped), which stays exact for
    consistent systems whose matrix is rank deficient (redundant constraints)."""
    if least_squares:
        return jnp.linalg.lstsq(J, r, rcond=1e-10)[0]
    return dense.solve(J, r)


def consistent_accelerations(system, q, v, t, least_squares: bool = False):
    r"""Solve $[M\ \Phi_q^T; \Phi_q\ 0][\ddot q; \lambda] = [Q; \gamma]$ (index-1 form)."""
    M, Phi_q = system.mass(q), system.constraints_q(q, t)
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
    - `newton`: `"full"` (default) forms the Newton matrix by autodiff and solves with
      it at every iteration (quadratic convergence). `"modified"` keeps the inverse
      Newton matrix across iterations *and steps* and forms a new one only when it
      is missing (first step), when an increment shrank by less than
      `contraction_max` relative to the previous one, or after `reuse_iterations`
      iterations of one step without convergence. An iteration then costs one
      residual evaluation and one matrix-vector product. Convergence is linear with
      the measured rate $\theta$, so the scaled error is $\max(1, \theta/(1-\theta))$
      times the increment. Under `vmap` a new matrix is formed for the whole batch
      when any sample needs one (every sample takes its new matrix, also one that
      has already converged in this step), so batches of similar samples pay for it
      rarely; batched results equal per-sample runs to the Newton tolerance, not
      bit for bit. Results agree with `"full"` to the Newton
      tolerance; gradients are the same (implicit differentiation at the converged
      point uses the exact Jacobian either way).
    - `contraction_max`, `reuse_iterations`: the refresh rules of `"modified"`.
    - `tangent_refinements`: with `"modified"`, the linear solves of implicit
      differentiation ($R_x\,dx = b$ in forward mode, $R_x^T\bar b = \bar x$ in
      reverse mode) start from the inverse $P$ kept at the end of the step's Newton
      solve and take up to this many refinement steps
      $dx \leftarrow dx + P(b - R_x dx)$, each one application of the linearized
      residual, instead of forming $R_x$ by autodiff and factoring it. They stop
      when the estimated error is below $10^{-13}$ relative; if the first step shows
      that this cannot be reached in time, or it was not, the exact matrix is formed
      and factored instead (`flexjax.solvers.implicit.refined_solve`). `0` always
      forms the exact matrix. Not used with `redundant` (a singular $R_x$).
    - `shared_matrix`: with `"modified"`, under `vmap` form one Newton matrix for the
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
      matrix to contract fails its step (`max_iter`) like any non-converging Newton
      solve. Under `run_batch` each device shares its own matrix. Without `vmap` it
      changes nothing.
    - `corotate`: with `"modified"`, rotate the kept matrix with the system. When the
      coordinates come in $(x, y)$ pairs that turn together under a rigid rotation of
      the system and the constraint rows come in pairs that turn with them (planar
      ANCF beams: constant isotropic mass matrix, objective elastic forces, constant
      gravity; pins and revolute joints between points, $\Phi = r_i - r_j$), the
      Newton matrix obeys $J(Tq) = T J(q) T^T$ exactly, $T$ rotating every pair by one
      angle. A body that swings without deforming much therefore keeps nearly the
      same matrix *in a frame that turns with it*: at the start of each step the kept
      inverse is turned, $J_0^{-1} \leftarrow T J_0^{-1} T^T$, with $T$ the
      least-squares rotation about the origin (`_rotation`) from the position it refers
      to (where it was formed, or the previous step's prediction) to this step's
      predicted position, which it then refers to; with `shared_matrix` both are the
      batch's mean positions (`batch_mean`); measured savings are in
      docs/performance.md. Turning costs about one matrix-vector product per step: on a beam whose deformation changes its matrix
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
    newton: str = eqx.field(static=True, default="full")
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
        if self.newton not in ("full", "modified"):
            raise ValueError(f"GeneralizedAlpha: `newton` must be 'full' or 'modified', got {self.newton!r}.")
        if not 0.0 < self.contraction_max < 1.0 or self.reuse_iterations < 1:
            raise ValueError("GeneralizedAlpha: need 0 < contraction_max < 1 and reuse_iterations >= 1.")
        if self.shared_matrix and self.newton != "modified":
            raise ValueError("GeneralizedAlpha: `shared_matrix=True` needs newton='modified' (a kept Newton matrix).")
        if self.corotate and self.newton != "modified":
            raise ValueError("GeneralizedAlpha: `corotate=True` needs newton='modified' (a kept Newton matrix).")
        if self.tangent_refinements < 0:
            raise ValueError(f"GeneralizedAlpha: `tangent_refinements` must be >= 0, got {self.tangent_refinements}.")

    def coefficients(self):
        """$(\\alpha_m, \\alpha_f, \\gamma, \\beta)$ from $\\rho_\\infty$ (Chung-Hulbert)."""
        r = self.rho_inf
        alpha_m = (2 * r - 1) / (r + 1)
        alpha_f = r / (r + 1)
        gamma = 0.5 + alpha_f - alpha_m
        beta = 0.25 * (gamma + 0.5) ** 2
        return alpha_m, alpha_f, gamma, beta

    def init(self, system, t0, q0, v0) -> GAState:
        """State at `t0` with consistent accelerations and multipliers."""
        qdd, lam = consistent_accelerations(system, q0, v0, t0, self.redundant)
        jac_inv_t = jac_valid = jac_coord = jac_ref = None
        if self.corotate and (q0.shape[0] % 2 or lam.shape[0] % 2):
            raise ValueError("GeneralizedAlpha: `corotate=True` needs (x, y) pairs: an even number of coordinates "
                             f"and of constraint rows, got {q0.shape[0]} and {lam.shape[0]}.")
        if self.corotate:
            jac_ref = self._frame_position(q0)
        if self.newton == "modified":
            n = q0.shape[0] + lam.shape[0] * (2 if self.index2 else 1)
            jac_inv_t, jac_valid = jnp.zeros((n, n), q0.dtype), jnp.array(False)
            if self.shared_matrix:
                jac_inv_t, jac_coord = jnp.zeros((n, 2 * n), q0.dtype), jnp.zeros((), q0.dtype)
        return GAState(q=q0, v=v0, a=qdd, qdd=qdd, lam=lam, z=system.force_states(),
                       jac_inv_t=jac_inv_t, jac_valid=jac_valid, jac_coord=jac_coord, jac_ref=jac_ref)

    def step(self, system, t, h, s: GAState) -> tuple[GAState, StepInfo]:
        r"""Advance `s` from `t` to `t + h`.

        Stateful force elements are advanced first, from the converged $q_n, \dot q_n$,
        and held fixed during the Newton solve (a sampled controller, a contact memory).
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
            r_dyn = system.mass(q1) @ qdd + Phi_vjp(lam)[0] - system.forces(q1, v1, t1)
            rows = [r_dyn, Phi / beta_h2]
            if self.index2:
                rows.append(system.constraint_velocity(q1, v1, t1) / gamma_h)
            return jnp.concatenate(rows)

        residual = lambda x: residual_of(system, x)
        x0 = jnp.concatenate([s.qdd, s.lam] + ([jnp.zeros(m, s.q.dtype)] if self.index2 else []))
        scale = (nq, m, beta_h2, max_abs(s.q))
        if self.newton == "modified":
            m_bar = max_abs(jnp.diagonal(system.mass(s.q)))
            fresh = self._fresh_inverse(residual_of, system)
            kept, turn = (s.jac_inv_t, s.jac_coord), None
            if self.corotate:  # turn the kept matrix from its position to this step's prediction
                position = lambda x: self._frame_position(kinematics(x)[1])
                predicted = position(x0)
                c, s_ = _rotation(s.jac_ref, predicted)
                kept = (_rotate_matrix(kept[0], c, s_), kept[1])
                turn = (position, predicted)
            newton = lambda f, x: self._modified_newton(f, x, *scale, m_bar, fresh, kept, s.jac_valid, turn)
        else:
            newton = lambda f, x: self._newton(f, x, *scale)
        if self.newton == "modified" and not self.redundant:

            def newton_kept(f, x):
                x, aux = newton(f, x)
                return x, aux[3][0][:, : x.shape[0]].T, aux

            # tangent solves preconditioned by the (batch's) inverse kept at the step's end
            x, _, aux = implicit_root(residual, x0, newton_kept, self.tangent_refinements)
        elif not self.redundant:

            def newton_plain(f, x):
                x, aux = newton(f, x)
                return x, jnp.zeros((0, 0), x.dtype), aux

            # tangent solves with the exact matrix (no kept inverse: zero refinements);
            # unlike custom_root, nothing of the derivative is traced unless differentiated
            x, _, aux = implicit_root(residual, x0, newton_plain, 0)
        else:
            # aux must be floating point: custom_root's JVP rule gives aux float tangents
            x, aux = jax.lax.custom_root(residual, x0, newton, self._tangent_solve, has_aux=True)
        error, iters, njac = aux[:3]
        qdd, lam = x[:nq], x[nq : nq + m]
        a1, q1, v1 = kinematics(x)
        info = StepInfo(error <= 1.0, error, iters.astype(int), njac.astype(int))
        jac = {}
        if self.newton == "modified":  # the kept matrix only steers Newton: no derivative
            jac_inv_t, jac_coord = jax.lax.stop_gradient(aux[3])
            jac = dict(jac_inv_t=jac_inv_t, jac_coord=jac_coord, jac_valid=s.jac_valid | (njac > 0))
            if self.corotate:
                jac["jac_ref"] = jax.lax.stop_gradient(aux[4])
        return GAState(q=q1, v=v1, a=a1, qdd=qdd, lam=lam, z=z, **jac), info

    def _newton(self, residual, x0, n_dyn, m, beta_h2, q_scale):
        r"""Full Newton with the autodiff Jacobian; returns `(x, (error, iterations))`.

        Increments are measured in position units, where round-off has a floor of
        $\epsilon |q|$ whatever the step size: $\Delta q = \beta' h^2 \Delta\ddot q$ and
        $\beta' h^2 \Delta\lambda / \bar m$ ($\bar m$: largest diagonal entry of the mass
        block), against `atol + rtol * max|q|`. Newton converges quadratically, so the
        error left after the last increment is far below it.
        """
        tol = self.atol + self.rtol * q_scale

        def cond(c):
            x, it, err = c
            return (it == 0) | ((it < self.max_iter) & (err > 1.0) & jnp.isfinite(err))

        def body(c):
            x, it, _ = c
            J, r = jax.jacfwd(lambda y: (r := residual(y), r), has_aux=True)(x)
            dx = linear_solve(J, r, self.redundant)
            err = _increment_error(dx, J, n_dyn, m, beta_h2) / tol
            return x - dx, it + 1, jnp.where(jnp.isfinite(err), err, jnp.inf)

        x, it, err = jax.lax.while_loop(cond, body, (x0, jnp.array(0), jnp.array(jnp.inf, x0.dtype)))
        return x, (err, it.astype(x.dtype), it.astype(x.dtype))

    def _fresh_inverse(self, residual_of, system):
        """`x -> (jac_inv_t, jac_coord)`, a new kept inverse at `x` (see `GAState`): the
        transposed inverse of the Newton matrix `jacfwd(residual_of(system, .))`, or with
        `shared_matrix` the batch's linearized one (`batch_linearized` along the
        floating-point arrays of `system`). Transposed because `r @ M` is a faster
        batched product than `r @ M.T` on CPU (no transposing copy per iteration)."""
        inverse = jnp.linalg.pinv if self.redundant else dense.inverse
        if not self.shared_matrix:
            return lambda x: (inverse(jax.jacfwd(lambda y: residual_of(system, y))(x).T), None)
        params, rest = eqx.partition(system, eqx.is_inexact_array)
        jacobian = lambda x, p: jax.jacfwd(lambda y: residual_of(eqx.combine(p, rest), y))(x)

        def fresh(x):
            J, dJ, coord = batch_linearized(jacobian, params)(x)
            Jinv_t = inverse(J.T)
            return jnp.concatenate([Jinv_t, Jinv_t @ dJ.T @ Jinv_t], axis=1), coord

        return fresh

    def _frame_position(self, q):
        """The position a kept matrix is referred to with `corotate`: the sample's own, or
        with `shared_matrix` the batch's mean (`batch_mean`), whose matrix it is."""
        return batch_mean(q) if self.shared_matrix else q

    def _modified_newton(self, residual, x0, n_dyn, m, beta_h2, q_scale, m_bar, fresh, kept, jac_valid, turn=None):
        r"""Newton with a kept inverse Newton matrix; returns `(x, (error, iterations,
        jacobians, kept, ref))`. See `newton` in the class docstring for the rules; `fresh`
        and `kept` are `_fresh_inverse` and its result (`(jac_inv_t, jac_coord)`). With
        `corotate`, `kept` has been turned to this step and `turn` is `(position, ref)`:
        the map from unknowns to the position the matrix is referred to and this step's
        predicted one; a new matrix resets `ref` to the position it is formed at.

        Increments are measured as in `_newton` (`m_bar`: largest diagonal entry of
        the mass matrix at the step's start); with the contraction rate
        $\theta_k = e_k / e_{k-1}$ of the increments, the error left after step $k$
        is at most $\theta_k/(1-\theta_k)\,e_k$ (a geometric series).
        """
        tol = self.atol + self.rtol * q_scale
        n = x0.shape[0]

        def active(it, err):
            return (it == 0) | ((it < self.max_iter) & (err > 1.0) & jnp.isfinite(err))

        # Under vmap the loop runs while any sample is active (`batch_any`), and samples
        # that are done keep their carries by `where`; the kept matrix is shared state (a
        # refresh is for the whole batch), so it is never selected per sample (that
        # select copied the whole batch of matrices at every iteration). The per-sample
        # scalars travel as one array [iterations, error, previous increment, rate,
        # refreshed in this step, matrices formed], updated by one fused `where`
        # instead of one small kernel each.
        def cond(c):
            return batch_any(active(c[1][..., 0], c[1][..., 1]))

        position, ref = turn if turn is not None else (None, None)

        def body(c):
            x, scalars, kept, ref = c
            it, err, inc_prev, theta, new, njac = (scalars[..., k] for k in range(6))
            on = active(it, err)
            stale = (new == 0) & (it >= self.reuse_iterations)
            need = on & ((njac == 0) & ~jac_valid | (theta > self.contraction_max) | stale)
            if turn is None:
                kept, refreshed = update_where(need, fresh, x, kept)
            else:
                (kept, ref), refreshed = update_where(need, lambda x: (fresh(x), position(x)), x, (kept, ref))
            Jinv_t, coord = kept
            r = residual(x)
            dx = r @ Jinv_t  # r as the left operand: batched, the samples stay rows
            if coord is not None:  # (J + t J')^{-1} = J^{-1} - t J^{-1} J' J^{-1} + O(t^2)
                dx = dx[..., :n] - coord * dx[..., n:]
            inc = _increment_error(dx, None, n_dyn, m, beta_h2, m_bar) / tol
            inc = jnp.where(jnp.isfinite(inc), inc, jnp.inf)
            theta_new = jnp.where(it == 0, 0.0, inc / inc_prev)
            rate = jnp.minimum(theta_new, 0.99)
            err_new = inc * jnp.maximum(1.0, rate / (1.0 - rate))
            err_new = jnp.where(theta_new >= 1.0, jnp.maximum(err_new, 1.0 + inc), err_new)  # diverging: never accept
            refreshed = refreshed.astype(x.dtype)
            updated = jnp.stack([it + 1, err_new, inc, theta_new, jnp.maximum(new, refreshed), njac + refreshed], -1)
            return jnp.where(on[..., None], x - dx, x), jnp.where(on[..., None], updated, scalars), kept, ref

        scalars = jnp.array([0.0, jnp.inf, 0.0, 0.0, 0.0, 0.0], x0.dtype)
        x, scalars, kept, ref = jax.lax.while_loop(cond, body, (x0, scalars, kept, ref))
        return x, (scalars[..., 1], scalars[..., 0], scalars[..., 5], kept, ref)

    def _tangent_solve(self, g, y):
        # g is the linearized residual at the solution; its matrix is the Newton matrix
        return linear_solve(jax.jacfwd(g)(y), y, self.redundant)


def _rotation(q_ref, q):
    r"""`(cos φ, sin φ)` of the least-squares rotation about the origin that takes the
    $(x, y)$ pairs of `q_ref` to those of `q`: $\varphi = \operatorname{atan2}(\sum
    p^0 \times p, \sum p^0 \cdot p)$ (2D Kabsch); the identity when that is undefined.
    The sums are fused trees (`sum_last`): once per step, where a reduction kernel
    costs more than the arithmetic."""
    x0, y0, x, y = q_ref[..., 0::2], q_ref[..., 1::2], q[..., 0::2], q[..., 1::2]
    cross, dot = sum_last(x0 * y - y0 * x), sum_last(x0 * x + y0 * y)
    norm = jnp.sqrt(cross * cross + dot * dot)
    ok = norm > 0
    safe = jnp.where(ok, norm, 1.0)
    return jnp.where(ok, dot / safe, 1.0), jnp.where(ok, cross / safe, 0.0)


def _rotate_matrix(M, c, s):
    """$T M T^T$ for a kept inverse `M` (n x kn: k blocks side by side, each turned),
    $T$ rotating every consecutive `(x, y)` pair by `(c, s)`: the four entries of each
    2 x 2 tile combined elementwise, with no transposes."""
    n, w = M.shape
    A = M.reshape(n // 2, 2, w // 2, 2)
    m00, m01, m10, m11 = A[:, 0, :, 0], A[:, 0, :, 1], A[:, 1, :, 0], A[:, 1, :, 1]
    r00, r01, r10, r11 = c * m00 - s * m10, c * m01 - s * m11, s * m00 + c * m10, s * m01 + c * m11  # T M
    tile = [[c * r00 - s * r01, s * r00 + c * r01], [c * r10 - s * r11, s * r10 + c * r11]]  # (T M) T^T
    return jnp.stack([jnp.stack(row, axis=-1) for row in tile], axis=1).reshape(n, w)


def _increment_error(dx, J, n_dyn, m, beta_h2, m_bar=None):
    r"""Largest Newton increment in position units: $\beta' h^2|\Delta\ddot q|$,
    $\beta' h^2|\Delta\lambda|/\bar m$ ($\bar m$: largest diagonal entry of the mass
    block of `J`, unless given) and $\beta' h^2|\Delta\mu|$ (index-2 only)."""
    if m_bar is None:
        m_bar = max_abs(jnp.diagonal(J)[:n_dyn])
    dq = beta_h2 * dx[:n_dyn]
    dl = beta_h2 * dx[n_dyn : n_dyn + m] / m_bar
    dmu = beta_h2 * dx[n_dyn + m :]
    return max_abs(jnp.concatenate([dq, dl, dmu]))
