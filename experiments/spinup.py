r"""Spin-up of a cantilever on a hub (Simo & Vu-Quoc 1986; Kane, Ryan & Banerjee 1987):
geometric stiffening, the reason for the `wc` term of seed 000.

A beam clamped to a hub on its axis, `ModalHubBeam(root="clamped")`, L = 10 m,
EA = 2.8e7 N, EI = 1.4e4 N m², $\rho A$ = 1.2 kg/m (first bending frequency
0.6045 Hz = 3.80 rad/s), four transverse modes, no axial modes (the first axial mode,
121 Hz, only makes the ODE stiff; with `kinetic="paper"` the stiffening comes from the
$w_c$ term in the centrifugal energy, which needs no axial mode). The hub angle is
prescribed by a `DrivingConstraint` (Udwadia-Kalaba form, `simulate_ode`, Tsit5):
$\theta(t) = \frac{\omega_s}{T_s}\left(\frac{t^2}{2} + \left(\frac{T_s}{2\pi}\right)^2
\left(\cos\frac{2\pi t}{T_s} - 1\right)\right)$ for $t \le T_s$,
$\omega_s(t - T_s/2)$ after, $T_s$ = 15 s, to 30 s, for $\omega_s$ = 4 and 10 rad/s.

Measured: the transverse tip deflection $w_2(L)$ in the hub frame. With `wc` (geometric
stiffening) it stays small and bounded. Without `wc` (the classic linear model) the
centrifugal softening $-\dot\theta^2 M_2$ is not balanced by the stiffening
$\dot\theta^2 D$: once $\dot\theta$ exceeds the first bending frequency the effective
stiffness $K_2 - \dot\theta^2 M_2$ is negative and the deflection grows exponentially.
A run is called diverged when $|w_2(L)| > L/2$ (far outside small deformations); an
event stops the integration there.

**Summary**: `tip_deflection_max_w4`, `tip_deflection_max_w10` (m, with `wc`),
`tip_deflection_max_w4_linear`, `tip_deflection_max_w10_linear` (m, without `wc`; the
max over the run up to divergence), `diverged_w<ws>[_linear]` (1 or 0),
`divergence_time_w<ws>[_linear]` (s; 0 when not diverged), `tip_deflection_final_w<ws>`
(m, at 30 s, with `wc`), `f1_bending` (Hz), `omega1_bending` (rad/s).
"""

import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import flexjax as fj
from flexjax.bodies.modal_beam import ModalHubBeam
from flexjax.joints import DrivingConstraint
from flexjax.plotting import _pyplot
from flexjax.solvers import UdwadiaKalaba

NAME = "spinup"
DESCRIPTION = "Spin-up of a hub-clamped cantilever (Simo & Vu-Quoc): geometric stiffening with and without wc"

LENGTH, EA, EI, RHO_A = 10.0, 2.8e7, 1.4e4, 1.2  # m, N, N m^2, kg/m
HUB_INERTIA = 1.0  # kg m^2; irrelevant, the hub angle is prescribed
TS, T_END = 15.0, 30.0  # s
OMEGAS = (4.0, 10.0)  # rad/s
N_MODES = 4
DIVERGED = 0.5 * LENGTH  # m


def hub_angle(t, omega_s, ts=TS):
    r"""Prescribed hub angle (rad), the Simo & Vu-Quoc profile (module docstring)."""
    t = jnp.asarray(t, float)
    up = omega_s / ts * (t**2 / 2 + (ts / (2 * jnp.pi)) ** 2 * (jnp.cos(2 * jnp.pi * t / ts) - 1))
    return jnp.where(t <= ts, up, omega_s * (t - ts / 2))


class SpinUpAngle(eqx.Module):
    """The prescribed hub angle as a module (`omega_s` a leaf, so runs at different spin
    rates share one compiled simulation)."""

    omega_s: jax.Array = eqx.field(converter=jnp.asarray)
    ts: jax.Array = eqx.field(converter=jnp.asarray, default=TS)

    def __call__(self, t):
        return hub_angle(t, self.omega_s, self.ts)


class HubCoordinate(eqx.Module):
    """f(q_b) = theta, the driven coordinate."""

    def __call__(self, q):
        return q[0]


class TipEvent(eqx.Module):
    """Event function: crosses zero when |tip deflection| reaches `DIVERGED`."""

    def __call__(self, t, q, v, system):
        return DIVERGED - jnp.abs(_tip(system.bodies[0], q))


def _tip(body, q):
    return body.deformation(q, jnp.array([LENGTH]))[0, 1]


@eqx.filter_jit
def _tips(body, qs):
    return jax.vmap(lambda q: _tip(body, q))(qs)


def beam(wc: bool, n_modes: int = N_MODES) -> ModalHubBeam:
    """The Simo & Vu-Quoc beam clamped to the hub."""
    return ModalHubBeam(HUB_INERTIA, LENGTH, RHO_A, EA, EI, n_axial=0, n_transverse=n_modes, wc=wc, root="clamped")


def simulate(omega_s: float, wc: bool, t_end: float = T_END, n_save: int = 601, n_modes: int = N_MODES):
    """Spin-up run; stops early when |tip| exceeds `DIVERGED`.

    **Returns:** `(t, theta, tip, event_time)` numpy arrays (s, rad, m) on the saved
    rows before the stop, and the stop time (inf if none)."""
    body = beam(wc, n_modes)
    system = fj.System([body], [DrivingConstraint(0, HubCoordinate(), SpinUpAngle(float(omega_s)))])
    n = body.ncoords
    tr = fj.simulate_ode(
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


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Both spin rates with and without `wc` (quick: 20 s horizon, 3 modes); writes
    `spinup.png` and `spinup.csv`. **Returns:** the summary (module docstring)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_end = 20.0 if quick else T_END
    n_modes = 3 if quick else N_MODES
    f1 = float(beam(True, n_modes).frequencies()[0])
    summary = {"f1_bending": f1, "omega1_bending": 2 * np.pi * f1, "t_end": t_end, "ts": TS}
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    rows = []
    cases = [(w, wc) for w in OMEGAS for wc in (True, False)]
    for w, wc in cases:
        t, _, tip, t_ev = simulate(w, wc, t_end, n_modes=n_modes)
        tag = f"w{w:g}" + ("" if wc else "_linear")
        diverged = bool(np.isfinite(t_ev))
        summary[f"tip_deflection_max_{tag}"] = float(np.max(np.abs(tip)))
        summary[f"diverged_{tag}"] = float(diverged)
        summary[f"divergence_time_{tag}"] = t_ev if diverged else 0.0
        if wc:
            summary[f"tip_deflection_final_{tag}"] = float(tip[-1])
        ax = axes[0] if wc else axes[1]
        ax.plot(
            t, tip, label=f"omega_s = {w:g} rad/s" + (f" (|tip| > {DIVERGED:g} m at {t_ev:.2f} s)" if diverged else "")
        )
        rows.append((tag, t, tip))
    axes[0].set_title("with wc (geometric stiffening)")
    axes[1].set_title("without wc (linear model)")
    axes[1].set_yscale("symlog", linthresh=1e-2)
    for a in axes:
        a.set_xlabel("t [s]")
        a.set_ylabel("transverse tip deflection in hub frame [m]")
        a.axvline(TS, color="k", lw=0.5)
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "spinup.png", dpi=110)
    plt.close(fig)
    with open(out_dir / "spinup.csv", "w") as fh:
        fh.write("case,t_s,tip_m\n")
        for tag, t, tip in rows:
            for a, b in zip(t, tip, strict=False):
                fh.write(f"{tag},{a:.6g},{b:.8g}\n")
    return summary
