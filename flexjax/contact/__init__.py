r"""Unilateral point-surface contact with Coulomb friction on any planar body (seed 004):
separation / impact / stick / slip phases, impulse-momentum impacts, event-located switching."""

from .geometry import PointSurfaceContact as PointSurfaceContact
from .phases import (
    IMPACT as IMPACT,
)
from .phases import (
    PHASE_NAMES as PHASE_NAMES,
)
from .phases import (
    SEPARATION as SEPARATION,
)
from .phases import (
    SLIP_NEGATIVE as SLIP_NEGATIVE,
)
from .phases import (
    SLIP_POSITIVE as SLIP_POSITIVE,
)
from .phases import (
    STICK as STICK,
)
from .phases import (
    impact as impact,
)
from .phases import (
    phase_dynamics as phase_dynamics,
)
from .simulate import (
    ContactSolution as ContactSolution,
)
from .simulate import (
    Switch as Switch,
)
from .simulate import (
    first_contact as first_contact,
)
from .simulate import (
    simulate_contact as simulate_contact,
)
