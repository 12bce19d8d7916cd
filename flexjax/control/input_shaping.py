r"""Input shaping: ZVD shapers per mode (seed 000 eq. 55-56), multi-mode convolution
(eq. 57) and shaped references (eq. 58).

A shaper is a train of impulses $f(t) = \sum_i A_i \delta(t - t_i)$; the shaped
reference is $u_{IS}(t) = (u * f)(t) = \sum_i A_i u(t - t_i)$. Times and amplitudes are
pytree leaves: shaped responses can be differentiated with respect to them (with a
smooth reference $u$; see `references.RestToRest`).
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_finite, is_concrete
from .._structural import compiled_when_concrete


class Shaper(eqx.Module):
    """Impulse train with `times` (s, >= 0) and `amplitudes` (sum 1 for unity gain)."""

    times: Float[Array, " k"]
    amplitudes: Float[Array, " k"]

    def __init__(self, times, amplitudes):
        self.times = jnp.asarray(times, float)
        self.amplitudes = jnp.asarray(amplitudes, float)
        if self.times.ndim != 1 or self.times.shape != self.amplitudes.shape or self.times.shape[0] == 0:
            raise ValueError(
                f"Shaper: `times` and `amplitudes` must be non-empty 1-D arrays of one length, "
                f"got shapes {self.times.shape} and {self.amplitudes.shape}."
            )
        check_finite("Shaper", "times", self.times)
        check_finite("Shaper", "amplitudes", self.amplitudes)
        if is_concrete(self.times) and np.any(np.asarray(self.times) < 0):
            raise ValueError(f"Shaper: impulse times must be >= 0, got {self.times}.")

    def convolve(self, other: "Shaper") -> "Shaper":
        r"""$f * g$: every pair of impulses, times added, amplitudes multiplied (eq. 57)."""
        t = (self.times[:, None] + other.times[None, :]).reshape(-1)
        a = (self.amplitudes[:, None] * other.amplitudes[None, :]).reshape(-1)
        return Shaper(t, a)

    def shape(self, reference, t):
        r"""Shaped reference $u_{IS}(t) = \sum_i A_i\,u(t - t_i)$ (eq. 58).

        `reference(t)` must accept times before its start (it should hold its initial
        value there, as `references.RestToRest` does)."""
        return jnp.sum(self.amplitudes * jnp.vectorize(reference)(t - self.times))

    @property
    def duration(self):
        """Time of the last impulse (s): the delay the shaper adds to a move."""
        return jnp.max(self.times)


def zvd(omega_n, zeta=0.0) -> Shaper:
    r"""ZVD shaper for one mode (seed 000 eq. 56).

    $\omega_d = \omega_n\sqrt{1-\zeta^2}$, $K = e^{-\zeta\pi/\sqrt{1-\zeta^2}}$; impulses
    $[1, 2K, K^2]/(1+K)^2$ at $[0, \pi/\omega_d, 2\pi/\omega_d]$.

    **Arguments:** `omega_n` natural frequency (rad/s, > 0), `zeta` damping ratio in [0, 1).
    """
    omega_n, zeta = jnp.asarray(omega_n, float), jnp.asarray(zeta, float)
    _check_modes("zvd", omega_n, zeta)
    root = jnp.sqrt(1 - zeta**2)
    omega_d = omega_n * root
    K = jnp.exp(-zeta * jnp.pi / root)
    norm = (1 + K) ** 2
    times = jnp.stack([jnp.zeros_like(omega_d), jnp.pi / omega_d, 2 * jnp.pi / omega_d])
    return Shaper(times, jnp.stack([jnp.ones_like(K), 2 * K, K**2]) / norm)


def _check_modes(owner: str, omega_n, zeta) -> None:
    """`ValueError` for concrete frequencies that are not positive or damping ratios
    outside [0, 1) (read with numpy: no small programs)."""
    if is_concrete(omega_n) and not np.all(np.asarray(omega_n) > 0):
        raise ValueError(f"{owner}: `omega_n` must be positive (rad/s), got {np.asarray(omega_n)}.")
    if is_concrete(zeta) and not np.all((np.asarray(zeta) >= 0) & (np.asarray(zeta) < 1)):
        raise ValueError(f"{owner}: `zeta` must lie in [0, 1), got {np.asarray(zeta)}.")


def multimode_zvd(omegas, zetas=None) -> Shaper:
    """Convolution of the ZVD shapers of several modes (eq. 57); `3**len(omegas)` impulses."""
    omegas = jnp.atleast_1d(jnp.asarray(omegas, float))
    zetas = jnp.zeros_like(omegas) if zetas is None else jnp.broadcast_to(jnp.asarray(zetas, float), omegas.shape)
    _check_modes("multimode_zvd", omegas, zetas)
    return Shaper(*_convolved_impulses(omegas, zetas))


@compiled_when_concrete  # on numbers one program, not one per array operation of each mode
def _convolved_impulses(omegas, zetas):
    """Times and amplitudes of the convolved ZVD shapers of `omegas`, `zetas` (eq. 57)."""
    shaper = zvd(omegas[0], zetas[0])
    for k in range(1, omegas.shape[0]):
        shaper = shaper.convolve(zvd(omegas[k], zetas[k]))
    return shaper.times, shaper.amplitudes


def residual_vibration(shaper: Shaper, omega_n, zeta=0.0):
    r"""Residual vibration ratio of a damped mode after the last impulse:
    $V = e^{-\zeta\omega_n t_N}\,|\sum_i A_i e^{\zeta\omega_n t_i} e^{j\omega_d t_i}|$
    (1 for an unshaped step, 0 when the shaper cancels the mode)."""
    omega_d = omega_n * jnp.sqrt(1 - zeta**2)
    w = shaper.amplitudes * jnp.exp(zeta * omega_n * (shaper.times - shaper.duration))
    c = jnp.sum(w * jnp.cos(omega_d * shaper.times))
    s = jnp.sum(w * jnp.sin(omega_d * shaper.times))
    return jnp.sqrt(c**2 + s**2)
