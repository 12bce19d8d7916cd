r"""PD control of one coordinate (seed 000 eq. 59) as a force element.

$\tau = K_p (u_{IS}(t) - \theta) - K_d \dot\theta$, with $u_{IS}$ the (shaped) reference
and $\theta$ the controlled coordinate. Gains and the reference's parameters are leaves.
"""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..forces.base import AbstractForce
from .input_shaping import Shaper


class PD(eqx.Module):
    """PD law `torque = kp * (reference(t) - x) - kd * xdot`; with `shaper`, the
    reference is shaped first (eq. 58)."""

    kp: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    kd: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    reference: Callable
    shaper: Shaper | None = None

    def target(self, t):
        """The (shaped) reference at time t."""
        return self.reference(t) if self.shaper is None else self.shaper.shape(self.reference, t)

    def __call__(self, t, x, xdot):
        return self.kp * (self.target(t) - x) - self.kd * xdot


class CoordinateControl(AbstractForce):
    """Applies `law(t, q_b[index], v_b[index])` as the generalized force on coordinate
    `index` of `body` (e.g. a motor torque on a hub angle)."""

    body: int = eqx.field(static=True)
    index: int = eqx.field(static=True)
    law: Callable
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[None] = None

    def __init__(self, body: int, index: int, law):
        if not callable(law):
            raise ValueError("CoordinateControl: `law` must be callable law(t, x, xdot).")
        self.body, self.index, self.law, self.bodies = body, index, law, (body,)

    def force(self, bodies, qs, vs, t):
        tau = self.law(t, qs[0][self.index], vs[0][self.index])
        n = qs[0].shape[0]
        i = self.index % n
        return (jnp.pad(jnp.reshape(tau, (1,)), (i, n - i - 1)),)  # a pad fuses; `.at[].set` is a scatter

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())
