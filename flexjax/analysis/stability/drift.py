r"""The Baumgarte drift equation $\ddot e + 2\alpha\dot e + \beta^2 e = 0$ and its discrete decay.

Vectorised `jax.numpy` code (jit/vmap/grad-friendly): the roots $\lambda_\pm$, the
continuous decay rate, the per-step amplification $\max_\pm |R(h\lambda_\pm)|$ of a method
and the admissibility test $|R(h\lambda_\pm)| \le 1$.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Complex, Float, Real

from ._polynomial import ADMISSIBLE_TOL, check_inputs
from .tableaus import ExplicitRungeKutta


def drift_roots(
    alpha: Real[ArrayLike, "*#shape"], beta: Real[ArrayLike, "*#shape"]
) -> tuple[Complex[Array, "..."], Complex[Array, "..."]]:
    r"""Roots $\lambda_\pm = -\alpha \pm \sqrt{\alpha^2 - \beta^2}$ of $\lambda^2 + 2\alpha\lambda + \beta^2 = 0$.

    **Returns:** `(lam_plus, lam_minus)` (complex; a conjugate pair when $\beta > \alpha$).
    The square root is guarded so that gradients stay finite at critical damping.
    """
    alpha, beta = jnp.asarray(alpha, float), jnp.asarray(beta, float)
    d = (alpha - beta) * (alpha + beta)  # exactly 0 at alpha == beta (alpha**2 - beta**2 may fuse to an FMA)
    nonzero = d != 0
    root = jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, jnp.abs(d), 1.0)), 0.0)
    sq = jnp.where(d >= 0, root + 0j, 1j * root)
    return -alpha + sq, -alpha - sq


def decay_rate(alpha: Real[ArrayLike, "*#shape"], beta: Real[ArrayLike, "*#shape"]) -> Float[Array, "..."]:
    r"""Continuous drift decay rate $\sigma = -\max \operatorname{Re}\lambda_\pm$ (1/s).

    $\sigma = \alpha - \sqrt{\alpha^2 - \beta^2}$ for real roots, $\alpha$ for complex
    ones; for a given $\beta$ it is largest ($= \beta$) at critical damping $\alpha = \beta$.
    """
    check_inputs("decay_rate", alpha=alpha, beta=beta)
    lam_plus, _ = drift_roots(alpha, beta)
    return -lam_plus.real


def drift_amplification(
    method: ExplicitRungeKutta,
    alpha: Real[ArrayLike, "*#shape"],
    beta: Real[ArrayLike, "*#shape"],
    h,
    *,
    nonholonomic: bool = False,
) -> Float[Array, "..."]:
    r"""Discrete decay factor $\rho = \max_\pm |R(h\lambda_\pm)|$ per step.

    The spectral radius of one step of `method` on the drift equation: the drift shrinks
    by about $\rho$ per step ($\rho \le 1$ iff admissible). Differentiable in
    `alpha`, `beta`, `h` (e.g. for a penalty $\max(\rho - 1, 0)$ when tuning). With
    `nonholonomic=True` the root $-2\alpha$ of the first-order drift
    $\dot\psi + 2\alpha\psi = 0$ of velocity-level rows is included too.
    """
    check_inputs("drift_amplification", h=h, alpha=alpha, beta=beta)
    alpha, beta, h = jnp.asarray(alpha, float), jnp.asarray(beta, float), jnp.asarray(h, float)
    rho = _amplification(method, alpha, beta, h)
    if nonholonomic:
        rho = jnp.maximum(rho, jnp.abs(method.stability_function(-2.0 * alpha * h)))
    return rho


@eqx.filter_jit  # one compiled kernel instead of dozens of eager complex ops per call
def _amplification(method, alpha, beta, h):
    lam_plus, lam_minus = drift_roots(alpha, beta)
    r_plus = jnp.abs(method.stability_function(h * lam_plus))
    r_minus = jnp.abs(method.stability_function(h * lam_minus))
    return jnp.maximum(r_plus, r_minus)


def is_admissible(
    method: ExplicitRungeKutta, alpha: Real[ArrayLike, "*#shape"], beta: Real[ArrayLike, "*#shape"], h
) -> Bool[Array, "..."]:
    r"""Whether $(\alpha, \beta)$ is admissible: $|R(h\lambda_\pm)| \le 1$ for both roots.

    **Arguments:** `method`; `alpha`, `beta` (1/s, non-negative, broadcast together);
    `h` (s, positive). A tolerance of a few ulps absorbs round-off at $R(0) = 1$.

    **Raises:** `ValueError` for a concrete $h \le 0$ or negative $\alpha$, $\beta$.
    """
    check_inputs("is_admissible", h=h, alpha=alpha, beta=beta)
    rho = _amplification(method, jnp.asarray(alpha, float), jnp.asarray(beta, float), jnp.asarray(h, float))
    return rho <= 1 + ADMISSIBLE_TOL
