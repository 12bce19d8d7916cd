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


class RestToRest(eqx.Module):
    r"""Smooth rest-to-rest move of `amplitude` over `duration` (s), starting at `start`:
    the cycloidal profile $g = a\,(\tau - \sin(2\pi\tau)/2\pi)$, $\tau = (t - t_0)/T$
    clipped to [0, 1] (zero velocity and acceleration at both ends). Holds its end
    values outside the move, so it can be shifted by an input shaper."""

    amplitude: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    duration: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    start: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=0.0)

    def __call__(self, t):
        tau = jnp.clip((t - self.start) / self.duration, 0.0, 1.0)
        return self.amplitude * (tau - jnp.sin(2 * jnp.pi * tau) / (2 * jnp.pi))


class Ramp(eqx.Module):
    r"""Linear move of `amplitude` over `duration` (s): $g = a \min(\max(t/T, 0), 1)$."""

    amplitude: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    duration: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    def __call__(self, t):
        return self.amplitude * jnp.clip(t / self.duration, 0.0, 1.0)
