r"""Spin-up of a cantilever on a hub (Simo & Vu-Quoc 1986; Kane, Ryan & Banerjee 1987):
geometric stiffening, the reason for the `wc` term of seed 000.

The model, `flexjax.models.spinup_beam`: a beam clamped to a hub on its axis,
`ModalHubBeam(root="clamped")`, L = 10 m, EA = 2.8e7 N, EI = 1.4e4 N m², $\rho A$ = 1.2 kg/m
(first bending frequency 0.6045 Hz = 3.80 rad/s), four transverse modes, no axial modes (the first axial mode,
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

import numpy as np

from flexjax import plotting
from flexjax.models.spinup_beam import DIVERGED, N_MODES, T_END, TS, simulate_spinup, spinup_beam

NAME = "spinup"
DESCRIPTION = "Spin-up of a hub-clamped cantilever (Simo & Vu-Quoc): geometric stiffening with and without wc"

OMEGAS = (4.0, 10.0)  # rad/s


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Both spin rates with and without `wc` (quick: 20 s horizon, 3 modes); writes
    `spinup.png` and `spinup.csv`. **Returns:** the summary (module docstring)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_end = 20.0 if quick else T_END
    n_modes = 3 if quick else N_MODES
    f1 = float(spinup_beam(True, n_modes).frequencies()[0])
    summary = {"f1_bending": f1, "omega1_bending": 2 * np.pi * f1, "t_end": t_end, "ts": TS}
    fig, axes = plotting.subplots(1, 2, figsize=(12, 4))
    rows = []
    cases = [(w, wc) for w in OMEGAS for wc in (True, False)]
    for w, wc in cases:
        t, _, tip, t_ev = simulate_spinup(w, wc, t_end, n_modes=n_modes)
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
    plotting.close(fig)
    with open(out_dir / "spinup.csv", "w") as fh:
        fh.write("case,t_s,tip_m\n")
        for tag, t, tip in rows:
            for a, b in zip(t, tip, strict=False):
                fh.write(f"{tag},{a:.6g},{b:.8g}\n")
    return summary
