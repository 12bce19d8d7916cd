"""The force-element interface: applied forces on the bodies an element names."""

import abc

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Scalar


class AbstractForce(eqx.Module):
    r"""A force element acting on the bodies listed in `bodies` (`None`: every body).

    `force` returns the generalized forces on those bodies (right-hand-side sign, one
    array per body, in order); `potential_energy` the element's potential $V$ (0 for
    non-conservative elements), so that conservative parts satisfy $Q = -\partial V/\partial q$
    and the system can report total mechanical energy.
    """

    bodies: eqx.AbstractVar[tuple[int, ...] | None]
    dim: eqx.AbstractVar[int | None]  # 2, 3, or None for any dimension

    @abc.abstractmethod
    def force(self, bodies, qs, vs, t: Scalar) -> tuple[Float[Array, " n"], ...]:
        """Generalized forces on `bodies` given their modules, coordinates, velocities."""

    @abc.abstractmethod
    def potential_energy(self, bodies, qs, t: Scalar) -> Scalar:
        """Potential energy of the element (0 if it has none)."""
