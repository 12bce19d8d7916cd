"""The force-element interface: applied forces on the bodies an element names."""

import abc
from typing import ClassVar

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Scalar


class AbstractForce(eqx.Module):
    r"""A force element acting on the bodies listed in `bodies` (`None`: every body).

    `force` returns the generalized forces on those bodies (right-hand-side sign, one
    array per body, in order); `potential_energy` the element's potential $V$ (0 for
    non-conservative elements), so that conservative parts satisfy $Q = -\partial V/\partial q$
    and the system can report total mechanical energy.

    `separable` (static; used by `flexjax.solvers._structure` for the sparsity of the
    Newton matrix): `True` when the force on each body depends only on that body's own
    coordinates and velocities, through the body's maps (`position`, `axes`,
    `center_of_mass`, node maps), so that it couples no more than the body itself
    declares (`AbstractBody.coupling`); `False` (the default, always safe): it may couple
    every coordinate of all its bodies with every other.

    `per_body` (static): `True` when the element acts on each of its bodies alone and
    alike, so that `force` is `body_force(body, q, v, t)` body by body and
    `potential_energy` the sum of `body_potential(body, q, t)`; the system then
    evaluates bodies of equal structure through one `vmap` (`flexjax._grouping`)
    instead of tracing one copy per body. Such an element defines both methods.
    """

    bodies: eqx.AbstractVar[tuple[int, ...] | None]
    dim: eqx.AbstractVar[int | None]  # 2, 3, or None for any dimension
    separable: ClassVar[bool] = False
    per_body: ClassVar[bool] = False

    def body_force(self, body, q, v, t: Scalar) -> Float[Array, " n"]:
        """The force on one body (elements with `per_body`)."""
        raise NotImplementedError(f"{type(self).__name__} does not act body by body (`per_body` is False).")

    def body_potential(self, body, q, t: Scalar) -> Scalar:
        """The potential energy of the element on one body (elements with `per_body`)."""
        raise NotImplementedError(f"{type(self).__name__} does not act body by body (`per_body` is False).")

    @abc.abstractmethod
    def force(self, bodies, qs, vs, t: Scalar) -> tuple[Float[Array, " n"], ...]:
        """Generalized forces on `bodies` given their modules, coordinates, velocities."""

    @abc.abstractmethod
    def potential_energy(self, bodies, qs, t: Scalar) -> Scalar:
        """Potential energy of the element (0 if it has none)."""


class AbstractStatefulForce(AbstractForce):
    r"""A force element with a discrete internal state (a sampled controller's integral,
    the impact velocity a contact law remembers).

    The state is the field `state` (a leaf). Fixed-step solvers call `advance_state`
    once at the start of each step with the converged $q_n, \dot q_n$ and the step
    $h$, store the result in the element (`System.with_force_states`) and keep it
    fixed while they solve for step $n+1$. Between steps nothing else changes it, so
    `force` stays a pure function of $(q, \dot q, t)$ and the element's fields.
    """

    state: eqx.AbstractVar[Float[Array, "..."]]

    @abc.abstractmethod
    def advance_state(self, bodies, qs, vs, t: Scalar, h: Scalar) -> Float[Array, "..."]:
        """State to use during the step $t \\to t + h$, given the state at its start."""
