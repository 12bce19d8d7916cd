"""Controllers, input shapers and reference signals (drive profiles).

- `PD`, `CoordinateControl`: PD law on one coordinate (seed 000 eq. 59).
- `PIDJointTorque`: PID on a joint angle, sampled integral (seed 002).
- `Shaper`, `zvd`, `multimode_zvd`, `residual_vibration`: input shaping (seed 000 eq. 55-58).
- References `g(t)`: `Constant`, `ConstantRate`, `Sinusoid`, `Polynomial`, `Ramp`, `RestToRest`, and the
  drive profiles `SmoothStart`, `Cycloidal`, `Trapezoidal`.
"""

from .input_shaping import (
    Shaper as Shaper,
)
from .input_shaping import (
    multimode_zvd as multimode_zvd,
)
from .input_shaping import (
    residual_vibration as residual_vibration,
)
from .input_shaping import (
    zvd as zvd,
)
from .pd import PD as PD
from .pd import CoordinateControl as CoordinateControl
from .pid import PIDJointTorque as PIDJointTorque
from .references import (
    Constant as Constant,
)
from .references import (
    ConstantRate as ConstantRate,
)
from .references import (
    Cycloidal as Cycloidal,
)
from .references import (
    Polynomial as Polynomial,
)
from .references import (
    Ramp as Ramp,
)
from .references import (
    RestToRest as RestToRest,
)
from .references import (
    Sinusoid as Sinusoid,
)
from .references import (
    SmoothStart as SmoothStart,
)
from .references import (
    Trapezoidal as Trapezoidal,
)
