r"""Differentiable reference signals $g(t)$ for driving constraints and controllers.

Each is an `eqx.Module` whose parameters are pytree leaves. The drive profiles
`SmoothStart` (ramp up to a constant speed), `Cycloidal` and `Trapezoidal` (rest-to-rest
moves) are meant as the prescribed motion of `AngleDriver` / `coordinate_driver`:
gradients of a simulation with respect to their parameters flow through the driver.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_finite, check_positive, check_shape, is_concrete


def _cycloid(tau):
    r"""Cycloidal fraction $\tau - \sin(2\pi\tau)/2\pi$ of a move, $\tau$ clipped to [0, 1]."""
    tau = jnp.clip(tau, 0.0, 1.0)
    return tau - jnp.sin(2 * jnp.pi * tau) / (2 * jnp.pi)


class Constant(eqx.Module):
    r"""$g(t) = c$: a constant scalar or vector signal, e.g. a fixed load of `PointForce`
    or `AppliedMoment3D`. `value` is a leaf, so runs at different values (a load
    sweep) reuse one compiled program.

    **Arguments:** `value`: the constant $c$, any shape.
    """

    value: Float[Array, "..."] = eqx.field(converter=jnp.asarray)

    def __call__(self, t):
        return self.value


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
        return self.amplitude * _cycloid((t - self.start) / self.duration)


class Ramp(eqx.Module):
    r"""Linear move of `amplitude` over `duration` (s): $g = a \min(\max(t/T, 0), 1)$."""

    amplitude: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    duration: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    def __call__(self, t):
        return self.amplitude * jnp.clip(t / self.duration, 0.0, 1.0)


def _check_duration(owner: str, name: str, value):
    value = jnp.asarray(value, float)
    check_shape(owner, name, value, ())
    check_positive(owner, name, value)
    return value


def _scalar(owner: str, name: str, value):
    value = jnp.asarray(value, float)
    check_shape(owner, name, value, ())
    check_finite(owner, name, value)
    return value


class SmoothStart(eqx.Module):
    r"""Drive profile: from rest at `initial` up to the constant speed `speed` over
    `ramp_time`, then constant speed.

    The speed rises as the cycloidal blend $\dot g = \omega\,(\tau - \sin(2\pi\tau)/2\pi)$,
    $\tau = (t - t_0)/T_r$, so speed and acceleration are continuous (zero acceleration
    at both ends of the ramp). Integrated in closed form:

    $$g(t) = g_0 + \omega T_r\left(\frac{\tau^2}{2} + \frac{\cos 2\pi\tau - 1}{4\pi^2}\right),\quad 0 \le \tau \le 1,$$

    $g = g_0 + \omega T_r/2 + \omega (t - t_0 - T_r)$ after the ramp and $g = g_0$ before
    `start`. Use it as the prescribed angle of `AngleDriver` or `coordinate_driver`, or as
    a controller reference; every field is a differentiable leaf.

    **Arguments:**

    - `speed`: final speed $\omega$ (rad/s or m/s).
    - `ramp_time`: $T_r$ (s, > 0).
    - `start`: $t_0$ (s), default 0.
    - `initial`: $g_0$, the value held before the start, default 0.
    """

    speed: Float[Array, ""]
    ramp_time: Float[Array, ""]
    start: Float[Array, ""]
    initial: Float[Array, ""]

    def __init__(self, speed, ramp_time, start=0.0, initial=0.0):
        self.speed = _scalar("SmoothStart", "speed", speed)
        self.ramp_time = _check_duration("SmoothStart", "ramp_time", ramp_time)
        self.start = _scalar("SmoothStart", "start", start)
        self.initial = _scalar("SmoothStart", "initial", initial)

    def __call__(self, t):
        s = jnp.maximum(t - self.start, 0.0)
        tau = jnp.minimum(s / self.ramp_time, 1.0)
        ramp = tau**2 / 2 + (jnp.cos(2 * jnp.pi * tau) - 1) / (4 * jnp.pi**2)
        return self.initial + self.speed * (self.ramp_time * ramp + jnp.maximum(s - self.ramp_time, 0.0))


class Cycloidal(eqx.Module):
    r"""Drive profile: cycloidal rest-to-rest move from `initial` by `amplitude` over
    `duration`, starting at `start`:
    $g = g_0 + a\,(\tau - \sin(2\pi\tau)/2\pi)$, $\tau = (t - t_0)/T$ clipped to [0, 1].

    Velocity and acceleration are zero at both ends; the peak speed is $2a/T$. Holds
    its end values outside the move, so it can be shifted by an input shaper. Use it as
    the prescribed angle of `AngleDriver` or `coordinate_driver`, or as a controller
    reference; every field is a differentiable leaf.

    **Arguments:** `amplitude` $a$; `duration` $T$ (s, > 0); `start` $t_0$ (s, default 0);
    `initial` $g_0$ (default 0).
    """

    amplitude: Float[Array, ""]
    duration: Float[Array, ""]
    start: Float[Array, ""]
    initial: Float[Array, ""]

    def __init__(self, amplitude, duration, start=0.0, initial=0.0):
        self.amplitude = _scalar("Cycloidal", "amplitude", amplitude)
        self.duration = _check_duration("Cycloidal", "duration", duration)
        self.start = _scalar("Cycloidal", "start", start)
        self.initial = _scalar("Cycloidal", "initial", initial)

    def __call__(self, t):
        return self.initial + self.amplitude * _cycloid((t - self.start) / self.duration)


class Trapezoidal(eqx.Module):
    r"""Drive profile: rest-to-rest move with a trapezoidal speed (constant
    acceleration, coast, constant deceleration) from `initial` by `amplitude` over
    `duration`, starting at `start`.

    With $T_a = f T$ the acceleration time ($0 < f \le 1/2$) and the coast speed
    $V = a/(T - T_a)$, for $s = t - t_0$:
    $g = g_0 + V s^2/2T_a$ ($s \le T_a$), $g_0 + V(s - T_a/2)$ (coast),
    $g_0 + a - V (T - s)^2/2T_a$ ($s \ge T - T_a$); the value is held outside the move.
    The acceleration jumps (by $\pm V/T_a$), unlike `Cycloidal`. Use it as the prescribed
    angle of `AngleDriver` or `coordinate_driver`, or as a controller reference; every
    field is a differentiable leaf.

    **Arguments:** `amplitude` $a$; `duration` $T$ (s, > 0); `accel_fraction` $f$
    (default 1/4; 1/2 gives a triangular speed); `start` $t_0$ (s, default 0);
    `initial` $g_0$ (default 0).
    """

    amplitude: Float[Array, ""]
    duration: Float[Array, ""]
    accel_fraction: Float[Array, ""]
    start: Float[Array, ""]
    initial: Float[Array, ""]

    def __init__(self, amplitude, duration, accel_fraction=0.25, start=0.0, initial=0.0):
        self.amplitude = _scalar("Trapezoidal", "amplitude", amplitude)
        self.duration = _check_duration("Trapezoidal", "duration", duration)
        self.accel_fraction = _check_duration("Trapezoidal", "accel_fraction", accel_fraction)
        if is_concrete(self.accel_fraction) and not float(self.accel_fraction) <= 0.5:
            raise ValueError(f"Trapezoidal: `accel_fraction` must lie in (0, 0.5], got {float(self.accel_fraction)}.")
        self.start = _scalar("Trapezoidal", "start", start)
        self.initial = _scalar("Trapezoidal", "initial", initial)

    def __call__(self, t):
        T = self.duration
        Ta = self.accel_fraction * T
        V = self.amplitude / (T - Ta)
        s = jnp.clip(t - self.start, 0.0, T)
        # the three pieces are finite everywhere, so jnp.where keeps the gradients clean
        rise = V * s**2 / (2 * Ta)
        coast = V * (s - Ta / 2)
        settle = self.amplitude - V * (T - s) ** 2 / (2 * Ta)
        return self.initial + jnp.where(s <= Ta, rise, jnp.where(s >= T - Ta, settle, coast))
