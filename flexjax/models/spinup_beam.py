r"""Spin-up of a cantilever on a hub (Simo & Vu-Quoc 1986; Kane, Ryan & Banerjee 1987):
the benchmark of geometric stiffening, the reason for the `wc` term of seed 000.

A beam clamped to a hub on its axis, `ModalHubBeam(root="clamped")`, L = 10 m,
EA = 2.8e7 N, EI = 1.4e4 N m², $\rho A$ = 1.2 kg/m (first bending frequency
0.6045 Hz = 3.80 rad/s), transverse modes only (the first axial mode, 121 Hz, only
makes the ODE stiff; with `kinetic="paper"` the stiffening comes from the $w_c$ term
in the centrifugal energy, which needs no axial mode). The hub angle is prescribed by a
`DrivingConstraint` (Udwadia-Kalaba form, `simulate_ode`, Tsit5):
$\theta(t) = \frac{\omega_s}{T_s}\left(\frac{t^2}{2} + \left(\frac{T_s}{2\pi}\right)^2
\left(\cos\frac{2\pi t}{T_s} - 1\right)\right)$ for $t \le T_s$,
$\omega_s(t - T_s/2)$ after, $T_s$ = 15 s.

Without `wc` (the classic linear model) the centrifugal softening is not balanced by the
stiffening once $\dot\theta$ exceeds the first bending frequency, and the deflection
grows exponentially; `simulate_spinup` stops a run when $|w_2(L)| > L/2$ (`DIVERGED`).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..bodies import ModalHubBeam
from ..joints import DrivingConstraint
from ..solvers import UdwadiaKalaba, simulate_ode
from ..system import System

LENGTH, EA, EI, RHO_A = 10.0, 2.8e7, 1.4e4, 1.2  # m, N, N m^2, kg/m
HUB_INERTIA = 1.0  # kg m^2; irrelevant, the hub angle is prescribed
TS, T_END = 15.0, 30.0  # s: spin-up time, the benchmark's horizon
N_MODES = 4
DIVERGED = 0.5 * LENGTH  # m: |tip deflection| beyond this counts as divergence


def spinup_hub_angle(t, omega_s, ts=TS):
    r"""Prescribed hub angle $\theta(t)$ (rad) of the Simo & Vu-Quoc profile (module docstring).

    **Arguments:** `t` (s); `omega_s` final spin rate (rad/s); `ts` spin-up time $T_s$ (s).
    """
    t = jnp.asarray(t, float)
    up = omega_s / ts * (t**2 / 2 + (ts / (2 * jnp.pi)) ** 2 * (jnp.cos(2 * jnp.pi * t / ts) - 1))
    return jnp.where(t <= ts, up, omega_s * (t - ts / 2))


class SpinUpAngle(eqx.Module):
    """The prescribed hub angle `spinup_hub_angle` as a signal $g(t)$ for a driving constraint.

    **Arguments:** `omega_s` (rad/s) and `ts` (s) are leaves, so runs at different spin
    rates share one compiled simulation.
    """

    omega_s: jax.Array = eqx.field(converter=jnp.asarray)
    ts: jax.Array = eqx.field(converter=jnp.asarray, default=TS)

    def __call__(self, t):
        return spinup_hub_angle(t, self.omega_s, self.ts)


class HubCoordinate(eqx.Module):
    r"""$f(q_b) = \theta$: the hub angle, the first coordinate of a `ModalHubBeam`."""

    def __call__(self, q):
        return q[0]


class TipEvent(eqx.Module):
    """Event function of `simulate_ode`: crosses zero when the transverse tip deflection
    of the system's first body reaches `DIVERGED` in magnitude."""

    def __call__(self, t, q, v, system):
        return DIVERGED - jnp.abs(_tip(system.bodies[0], q))


def _tip(body, q):
    return body.deformation(q, jnp.array([LENGTH]))[0, 1]


@eqx.filter_jit
def _tips(body, qs):
    return jax.vmap(lambda q: _tip(body, q))(qs)


def spinup_beam(wc: bool, n_modes: int = N_MODES) -> ModalHubBeam:
    """The Simo & Vu-Quoc beam clamped to its hub.

    **Arguments:** `wc`: with the geometric-stiffening term (`False`: the linear model);
    `n_modes`: transverse modes (no axial modes).

    **Returns:** the `ModalHubBeam`.
    """
    return ModalHubBeam(HUB_INERTIA, LENGTH, RHO_A, EA, EI, n_axial=0, n_transverse=n_modes, wc=wc, root="clamped")


def simulate_spinup(omega_s: float, wc: bool, t_end: float = T_END, n_save: int = 601, n_modes: int = N_MODES):
    """Spin-up run of `spinup_beam(wc, n_modes)` to final rate `omega_s` (rad/s); stops
    early when |tip| exceeds `DIVERGED`.

    **Arguments:** `t_end` (s); `n_save` equally spaced saved rows on [0, `t_end`].

    **Returns:** `(t, theta, tip, event_time)`: numpy arrays (s, rad, m) on the saved
    rows before the stop, and the stop time (s; inf if none).
    """
    body = spinup_beam(wc, n_modes)
    system = System([body], [DrivingConstraint(0, HubCoordinate(), SpinUpAngle(float(omega_s)))])
    n = body.ncoords
    tr = simulate_ode(
        system,
        jnp.zeros(n),
        jnp.zeros(n),
        t_end,
        form=UdwadiaKalaba(),
        rtol=1e-8,
        atol=1e-10,
        ts=jnp.linspace(0.0, t_end, n_save),
        event=TipEvent(),
        throw=False,
    )
    ok = np.isfinite(np.asarray(tr.t))
    q = tr.q[ok]
    tip = np.asarray(_tips(body, q))
    return np.asarray(tr.t)[ok], np.asarray(q[:, 0]), tip, float(tr.event_time)
