r"""Which Baumgarte pair $(\alpha, \beta)$ to use with a method and a step.

`recommend` maximises the continuous drift decay rate with a margin inside the region;
`deadbeat_pairs` put the drift roots on zeros of $R$ (the optimum of the discrete criterion).
"""

import math
from typing import NamedTuple

import numpy as np

from ._polynomial import check_inputs, trimmed_coefficients
from .drift import decay_rate, drift_amplification
from .region import leftmost_point
from .tableaus import ExplicitRungeKutta


class Recommendation(NamedTuple):
    r"""A recommended Baumgarte pair and its numbers.

    - `alpha`, `beta`: the pair (1/s).
    - `decay_rate`: continuous drift decay rate $\sigma = -\max\operatorname{Re}\lambda_\pm$ (1/s).
    - `amplification`: discrete decay factor $\rho = \max|R(h\lambda_\pm)|$ per step at `h`.
    - `discrete_decay_rate`: $-\ln\rho / h$ (1/s), the decay rate the integrated drift
      actually has (for constraints linear in $q$, exactly).
    - `h`, `margin`: the step and margin it was computed for.
    """

    alpha: float
    beta: float
    decay_rate: float
    amplification: float
    discrete_decay_rate: float
    h: float
    margin: float


def recommend(method: ExplicitRungeKutta, h: float, margin: float = 0.2) -> Recommendation:
    r"""The pair with the fastest continuous drift decay that is admissible with a margin.

    Criterion: maximise $\sigma(\alpha, \beta) = -\max\operatorname{Re}\lambda_\pm$ subject to
    $(\alpha, \beta)/(1 - m)$ being admissible at step $h$ (equivalently: $(\alpha, \beta)$
    admissible at the step $h/(1 - m)$; the roots $h\lambda_\pm$ may grow by the factor
    $1/(1-m)$ before leaving the region). Real roots never win (the critical pair
    $\alpha = \beta$ with the same $\beta$ decays faster and is admissible whenever the
    real pair is), so the optimum puts $h\lambda/(1-m)$ at the `leftmost_point` $z^*$ of
    the region: $\alpha = -(1-m)\operatorname{Re} z^*/h$,
    $\beta = (1-m)|z^*|/h$ — critical damping $\alpha = \beta$ when $z^*$ is the
    real-axis limit (RK4). The discrete factor $\rho$ at $h$ and the rate
    $-\ln\rho/h$ the integrated drift really decays with are returned alongside; near
    the boundary that rate is well below $\sigma$ (RK4, $m = 0.2$: 8.3 vs 22.3 1/s at
    $h = 0.1$), which is why the margin matters. `deadbeat_pairs` gives the optimum of
    the discrete criterion ($\rho = 0$) instead.

    **Arguments:** `method`, `h` (s), `margin` $m \in [0, 1)$.
    """
    check_inputs("recommend", h=h)
    if not (0 <= margin < 1):
        raise ValueError(f"recommend: margin must lie in [0, 1), got {margin}.")
    z = leftmost_point(method)
    # 1e-12: keep the margin test on the admissible side after rounding of the scaling
    scale = (1 - margin) / h * (1 - 1e-12)
    alpha = -z.real * scale
    # beta from |z|, but never below alpha (round-off on the real axis)
    beta = max(abs(z) * scale, alpha)
    rho = float(drift_amplification(method, alpha, beta, h))
    return Recommendation(
        alpha=float(alpha),
        beta=float(beta),
        decay_rate=float(decay_rate(alpha, beta)),
        amplification=rho,
        discrete_decay_rate=-math.log(rho) / h if rho > 0 else math.inf,
        h=float(h),
        margin=float(margin),
    )


def deadbeat_pairs(method: ExplicitRungeKutta, h: float) -> list[tuple[float, float]]:
    r"""Pairs whose drift roots $h\lambda_\pm$ sit on zeros of $R$: the drift vanishes in one step.

    A zero $z_0 = x + iy$ of $R$ with $x < 0$, $y \ge 0$ gives $\lambda_\pm = (x \pm iy)/h$,
    i.e. $\alpha = -x/h$, $\beta = |z_0|/h$ (a real zero gives critical damping). This is
    the optimum of the *discrete* criterion ($\rho = 0$), exact for the linear drift
    equation; with nonlinear constraints the drift map is only close to it, and the
    pair may leave little margin (check `is_admissible` at `h / (1 - margin)`).

    **Returns:** `[(alpha, beta), ...]` sorted by increasing $\beta$.
    """
    check_inputs("deadbeat_pairs", h=h)
    zeros = np.roots(trimmed_coefficients(method)[::-1])
    pairs = {(float(-z.real / h), float(abs(z) / h)) for z in zeros if z.real < 0 and z.imag >= -1e-12 * abs(z)}
    return sorted(pairs, key=lambda p: p[1])
