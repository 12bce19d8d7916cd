r"""Index-1 / ODE forms of the constrained equations, integrated with diffrax.

Two ways to turn $M\ddot q + A^T\lambda = Q$, $\Phi = 0$, $\psi = 0$ (holonomic and
nonholonomic constraints, $A$ their acceleration-level matrix) into an ODE
$\ddot q = f(q, \dot q, t)$, both with Baumgarte stabilization of the drift,
$\ddot\Phi + 2\alpha\dot\Phi + \beta^2\Phi = 0$, i.e. $\Phi_q\ddot q = b$ with
$b = \gamma - 2\alpha\dot\Phi - \beta^2\Phi$:

- `Baumgarte`: the augmented system $[M\ \Phi_q^T;\ \Phi_q\ 0][\ddot q; \lambda] = [Q; b]$
  (needs independent constraints).
- `UdwadiaKalaba`: $\ddot q = a + L^{-T}(A L^{-T})^+ (b - A a)$, $a = M^{-1}Q$, $A = \Phi_q$,
  $M = L L^T$ (Cholesky). This is the Udwadia-Kalaba equation with $M^{-1/2}$ replaced
  by $L^{-T}$: both give the minimizer of Gauss's $(\ddot q - a)^T M (\ddot q - a)$
  subject to $A\ddot q = b$, and the Cholesky factor has a well-defined derivative
  where $M^{1/2}$ (via an eigen-decomposition) does not (repeated masses). The
  pseudo-inverse handles redundant (rank-deficient) constraints.
"""

import abc

import equinox as eqx
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_shape, is_concrete


def _check_pair(owner, alpha, beta):
    for name, x in (("alpha", alpha), ("beta", beta)):
        check_shape(owner, name, x, ())
        if is_concrete(x) and not (np.isfinite(x) and x >= 0):
            raise ValueError(
                f"{owner}: `{name}` must be finite and >= 0 (1/s), got {float(x)}; a negative value "
                "makes the constraint drift grow instead of decay."
            )


def stabilized_rows(system, q, v, t, alpha, beta):
    r"""$A\ddot q = b$ with Baumgarte terms: holonomic rows get
    $-2\alpha\dot\Phi - \beta^2\Phi$, nonholonomic rows $-2\alpha\psi$
    (first-order drift $\dot\psi + 2\alpha\psi = 0$)."""
    A, b = system.acceleration_constraints(q, v, t)
    Phi = system.constraints(q, t)
    drift = jnp.concatenate(
        [2 * alpha * system.constraint_velocity(q, v, t) + beta**2 * Phi, 2 * alpha * system.nonholonomic(q, v, t)]
    )
    return A, b - drift


class AbstractODEForm(eqx.Module):
    r"""An ODE form of the constrained equations: `acceleration(system, q, v, t)` returns
    $(\ddot q, \lambda)$ with the constraint drift stabilized by Baumgarte's terms
    (`alpha`, `beta`, 1/s, leaves). `simulate_ode` integrates $\dot q = v$,
    $\dot v = \ddot q$ with it; `simulate_contact` adds the contact rows to it."""

    alpha: eqx.AbstractVar[Float[Array, ""]]
    beta: eqx.AbstractVar[Float[Array, ""]]

    @abc.abstractmethod
    def acceleration(self, system, q, v, t) -> tuple[Float[Array, " nq"], Float[Array, " m"]]:
        """Returns `(qdd, lam)` at `(q, v, t)`."""


class Baumgarte(AbstractODEForm):
    r"""Augmented index-1 form with Baumgarte terms; `alpha`, `beta` (1/s) are leaves.

    $\alpha = \beta = 0$ gives the plain index-1 form (drift grows)."""

    alpha: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)
    beta: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)

    def __check_init__(self):
        _check_pair("Baumgarte", self.alpha, self.beta)

    def acceleration(self, system, q, v, t):
        """Returns `(qdd, lam)`."""
        M = system.mass(q)
        A, b = stabilized_rows(system, q, v, t, self.alpha, self.beta)
        m = A.shape[0]
        K = jnp.block([[M, A.T], [A, jnp.zeros((m, m), q.dtype)]])
        rhs = jnp.concatenate([system.forces(q, v, t), b])
        x = jnp.linalg.solve(K, rhs)
        return x[: q.shape[0]], x[q.shape[0] :]


class UdwadiaKalaba(AbstractODEForm):
    r"""Udwadia-Kalaba explicit form with Baumgarte terms (`alpha`, `beta` leaves).

    `rcond`: singular values of $A L^{-T}$ below `rcond` times the largest are treated
    as zero (redundant constraints). Multipliers, where needed, are the least-squares
    solution of $\Phi_q^T\lambda = Q - M\ddot q$.
    """

    alpha: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)
    beta: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)
    rcond: float = eqx.field(static=True, default=1e-10)

    def __check_init__(self):
        _check_pair("UdwadiaKalaba", self.alpha, self.beta)
        if not self.rcond > 0:
            raise ValueError(f"UdwadiaKalaba: `rcond` must be positive, got {self.rcond}.")

    def acceleration(self, system, q, v, t):
        """Returns `(qdd, lam)`."""
        M, Q = system.mass(q), system.forces(q, v, t)
        A, b = stabilized_rows(system, q, v, t, self.alpha, self.beta)
        L = jnp.linalg.cholesky(M)
        a = jsl.cho_solve((L, True), Q)
        B = jsl.solve_triangular(L, A.T, lower=True).T  # A L^{-T}
        z = jnp.linalg.pinv(B, rtol=self.rcond) @ (b - A @ a)
        qdd = a + jsl.solve_triangular(L.T, z, lower=False)
        lam = jnp.linalg.pinv(A.T, rtol=self.rcond) @ (Q - M @ qdd)
        return qdd, lam
