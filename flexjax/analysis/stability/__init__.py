r"""Baumgarte stability regions of one-step integrators (seed 003, SPEC "Analyses").

With Baumgarte stabilization each constraint error $e$ obeys the drift equation
$\ddot e + 2\alpha\dot e + \beta^2 e = 0$, whose eigenvalues are the roots of
$\lambda^2 + 2\alpha\lambda + \beta^2 = 0$,

$$\lambda_\pm = -\alpha \pm \sqrt{\alpha^2 - \beta^2}$$

(a complex pair when $\beta > \alpha$). A one-step method applied to a linear ODE
$\dot y = J y$ with step $h$ gives $y_{n+1} = R(hJ)\,y_n$, $R$ its stability function;
the integrated drift therefore stays bounded exactly when $|R(h\lambda_\pm)| \le 1$.
A pair $(\alpha, \beta)$ that satisfies this for both roots is *admissible* for the
method and the step. Because the roots scale linearly with $(\alpha, \beta)$, the
admissible region at step $h$ is the region at $h = 1$ divided by $h$.

An explicit Runge-Kutta method with Butcher tableau $(A, b, c)$ has the polynomial
stability function $R(z) = 1 + z b^T (I - zA)^{-1}\mathbb 1 = \sum_{k=0}^{s} z^k\, b^T A^{k-1}\mathbb 1$
($A$ strictly lower triangular, so $A^s = 0$). `ExplicitRungeKutta` stores the tableau
and evaluates $R$ from these coefficients; `RK4_TABLEAU`, `EULER_TABLEAU`, `HEUN_TABLEAU`
are built in (not to be confused with the solver `flexjax.RK4`) and `from_diffrax` reads
the tableau of a diffrax explicit RK solver.

The region functions (`is_admissible`, `drift_amplification`, `region_grid`) are
vectorised `jax.numpy` code (jit/vmap/grad-friendly); the boundary, axis limits, the
recommendation and the deadbeat pairs are Python-level searches that return floats.
See docs/stability.md for the definitions and the numbers.

Modules: `tableaus` (the methods), `drift` (the drift equation, admissibility),
`region` (region geometry), `recommendation` (which pair to use), `plots` (PNGs).
"""

from .drift import (
    decay_rate as decay_rate,
    drift_amplification as drift_amplification,
    drift_roots as drift_roots,
    is_admissible as is_admissible,
)
from .plots import plot_region as plot_region, plot_stability_region as plot_stability_region
from .recommendation import Recommendation as Recommendation, deadbeat_pairs as deadbeat_pairs, recommend as recommend
from .region import (
    RegionBoundary as RegionBoundary,
    RegionGrid as RegionGrid,
    imaginary_axis_limit as imaginary_axis_limit,
    leftmost_point as leftmost_point,
    real_axis_limit as real_axis_limit,
    region_boundary as region_boundary,
    region_grid as region_grid,
    region_radius as region_radius,
)
from .tableaus import (
    EULER_TABLEAU as EULER_TABLEAU,
    HEUN_TABLEAU as HEUN_TABLEAU,
    RK4_TABLEAU as RK4_TABLEAU,
    ExplicitRungeKutta as ExplicitRungeKutta,
    from_diffrax as from_diffrax,
)
