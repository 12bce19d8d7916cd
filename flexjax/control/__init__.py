"""Controllers, input shapers and reference signals (drive profiles).

- `PD`, `CoordinateControl`: PD law on one coordinate (seed 000 eq. 59).
- `PIDJointTorque`: PID on a joint angle, sampled integral (seed 002).
- `Shaper`, `zvd`, `multimode_zvd`, `residual_vibration`: input shaping (seed 000 eq. 55-58).
- References `g(t)`: `Constant`, `ConstantRate`, `Sinusoid`, `Polynomial`, `Ramp`, `RestToRest`, and the
  drive profiles `SmoothStart`, `Cycloidal`, `Trapezoidal`.
"""

from .input_shaping import (
    Shaper as Shaper,
    multimode_zvd as multimode_zvd,
    residual_vibration as residual_vibration,
    zvd as zvd,
)
from .pd import PD as PD, CoordinateControl as CoordinateControl
from .pid import PIDJointTorque as PIDJointTorque
from .references import (
    Constant as Constant,
    ConstantRate as ConstantRate,
    Cycloidal as Cycloidal,
    Polynomial as Polynomial,
    Ramp as Ramp,
    RestToRest as RestToRest,
    Sinusoid as Sinusoid,
    SmoothStart as SmoothStart,
    Trapezoidal as Trapezoidal,
)
