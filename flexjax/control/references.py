r"""Differentiable reference signals $g(t)$ for driving constraints and controllers.

Each is an `eqx.Module` whose parameters are pytree leaves.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float


class ConstantRate(eqx.Module):
    r"""$g(t) = g_0 + \omega t$."""

    start: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    rate: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    def __call__(self, t):
        return self.start + self.rate * t


class Sinusoid(eqx.Module):
    r"""$g(t) = c + A \sin(\omega t + \phi)$."""

    amplitude: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    omega: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    phase: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)
    offset: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)

    def __call__(self, t):
        return self.offset + self.amplitude * jnp.sin(self.omega * t + self.phase)


class Polynomial(eqx.Module):
    r"""$g(t) = \sum_k c_k t^k$ (coefficients in increasing order)."""

    coefficients: Float[Array, " k"] = eqx.field(converter=jnp.asarray)

    def __call__(self, t):
        return jnp.polyval(self.coefficients[::-1], t)
