r"""Unilateral point-surface contact with Coulomb friction on any planar body (seed 004):
separation / impact / stick / slip phases, impulse-momentum impacts, event-located switching."""

from .geometry import PointSurfaceContact as PointSurfaceContact
from .phases import (
    IMPACT as IMPACT,
    PHASE_NAMES as PHASE_NAMES,
    SEPARATION as SEPARATION,
    SLIP_NEGATIVE as SLIP_NEGATIVE,
    SLIP_POSITIVE as SLIP_POSITIVE,
    STICK as STICK,
    impact as impact,
    phase_dynamics as phase_dynamics,
)
from .simulate import (
    ContactSolution as ContactSolution,
    Switch as Switch,
    first_contact as first_contact,
    simulate_contact as simulate_contact,
)
