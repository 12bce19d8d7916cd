r"""ZVD input shaping + PD control of the FLFJ arm (seed 000, section 3.4, Figs. 11-19).

**Plant** (in every case, as in the paper): the FLFJ model `flexjax.models.flfj_arm`,
`ModalHubBeam(root="elastic")` with the rod of `flfj_modes` (steel, d = 2 mm, l = 1 m), hub = motor rotor of inertia
0.002 kg m², joint stiffness k = 1 or 0.1 N m/rad, four transverse modes. No joint or
structural damping (the seed gives damping only for its ADAMS comparison, Table 3), so
the only dissipation is the controller's: residual vibration is what the shaper failed
to cancel. Axial modes are left out (`n_axial = 0`): the first axial mode of this rod
is at 1.28 kHz, which would make the ODE stiff for no visible effect on a planar
slewing move.

**Controller**: PD on the hub angle (seed eq. 59), $\tau = K_p(u_{IS}(t) - \theta) -
K_d\dot\theta$, $K_p = 0.6$, $K_d = 0.3$, with the shaped reference $u_{IS} = u * f$
(eq. 58). **Reference** (our reading of Fig. 11, whose curves are not in the text): a
linear ramp of 1 rad over T = 1, 2, 3, 4 s, held at 1 rad afterwards (`Ramp`).

**Shapers**: the four-mode ZVD (eq. 56-57, 81 impulses, undamped) built from
(a) the FLFJ model's frequencies (eq. 32 with the root spring; `flfj`) and
(b) the Spong model's link frequencies, i.e. the cantilever's (ref. 21; `spong`);
plus the unshaped ramp (`unshaped`) as a baseline.

**Measures** (summary keys, `<k>` = `k1` or `k0p1`, `<T>` = 1..4, `<s>` = `flfj`,
`spong`, `unshaped`):

- `residual_tip_vibration_<k>_t<T>s_<s>`: max |transverse tip deflection| (m) in the
  window that starts one first-mode period $1/f_1$ after the *longer* (FLFJ) shaped
  reference has ended, $t \ge T + t_{ZVD,flfj} + 1/f_{1,flfj}$
  (`window_start_<k>_t<T>s`), to the end of the run ($T + t_{ZVD,flfj}$ + 6 s); one
  common window for the three controllers. The period's delay matters: with these
  gains the closed loop lags the reference (slow pole near -2.2 1/s), so right at the
  end of the reference the hub is still decelerating and the tip deflection there is
  the quasi-static bend of that deceleration, not residual vibration. The tip
  deflection is $w_2(l)$ in the hub frame, so it includes the joint's twist.
- `settling_time_<k>_t<T>s_<s>`: the last time (s) at which $|\theta - 1| > 0.01$ rad or
  $|w_2(l)| > 1$ mm (the 1 % / 1 mm band).
- `theta_final_<k>_t<T>s_<s>` (rad), `torque_max_<k>_t<T>s_<s>` (N m),
  `shaper_duration_<k>_<flfj|spong>` (s), `f1_<k>_flfj` ... `f4_...` (Hz, eq. 32),
  `f1_cant` ... `f4_cant` (Hz).
"""

import csv
import pathlib

import numpy as np

from flexjax import plotting
from flexjax.control.input_shaping import Shaper, multimode_zvd
from flexjax.models.flfj_arm import KD, KP, ROTOR_INERTIA, flfj_arm, flfj_cantilever_frequencies, simulate_flfj_arm

NAME = "flfj_control"
DESCRIPTION = "FLFJ arm: PD + 4-mode ZVD shaping from the FLFJ vs the Spong (cantilever) model, k = 1 and 0.1"

KS = (1.0, 0.1)
DURATIONS = (1.0, 2.0, 3.0, 4.0)
AFTER = 6.0  # s simulated after the longer shaped move
THETA_BAND, TIP_BAND = 0.01, 1e-3  # settling band: rad, m
SHAPERS = ("flfj", "spong", "unshaped")


def k_tag(k: float) -> str:
    """`1.0 -> "k1"`, `0.1 -> "k0p1"` (the key pattern of the summary)."""
    return "k" + f"{k:g}".replace(".", "p")


def settling_time(t, theta, tip, theta_band=THETA_BAND, tip_band=TIP_BAND) -> float:
    """Last time at which |theta - 1| > theta_band or |tip| > tip_band (0 if never)."""
    out = (np.abs(theta - 1.0) > theta_band) | (np.abs(tip) > tip_band)
    return float(t[np.nonzero(out)[0][-1]]) if out.any() else 0.0


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """All cases (quick: k = 1, T = 1 s, 2 s after the move); writes `control_<k>.png`
    (rows T, columns theta / tip deflection / torque; the paper's Figs. 12-19) and
    `control_<k>_t<T>s.csv`. **Returns:** the summary (module docstring)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ks = KS[:1] if quick else KS
    durations = DURATIONS[:1] if quick else DURATIONS
    after = 2.0 if quick else AFTER
    f_cant = np.asarray(flfj_cantilever_frequencies())
    summary: dict[str, float] = {"kp": KP, "kd": KD, "rotor_inertia": ROTOR_INERTIA}
    for i, f in enumerate(f_cant):
        summary[f"f{i + 1}_cant"] = float(f)
    cases = [(k, T) for k in ks for T in durations]
    if progress:
        from tqdm.auto import tqdm

        cases = tqdm(cases, desc=NAME, leave=False)
    figs = {}
    for k, T in cases:
        kt = k_tag(k)
        body = flfj_arm(k)
        f_flfj = np.asarray(body.frequencies())
        shapers = {
            "flfj": multimode_zvd(2 * np.pi * f_flfj),
            "spong": multimode_zvd(2 * np.pi * f_cant),
        }
        # the unshaped ramp as an 81-impulse train (one impulse of 1 at t = 0): same pytree
        # structure as the ZVD shapers, so the compiled simulation is reused
        n_imp = shapers["flfj"].times.shape[0]
        shapers["unshaped"] = Shaper(np.zeros(n_imp), np.eye(1, n_imp)[0])
        for i, f in enumerate(f_flfj):
            summary[f"f{i + 1}_{kt}_flfj"] = float(f)
        for s in ("flfj", "spong"):
            summary[f"shaper_duration_{kt}_{s}"] = float(shapers[s].duration)
        t_move = T + float(shapers["flfj"].duration)
        t_window = t_move + 1.0 / f_flfj[0]
        summary[f"window_start_{kt}_t{T:g}s"] = t_window
        t1 = t_move + after
        if k not in figs:
            nrow = len(durations)
            figs[k] = plotting.subplots(nrow, 3, figsize=(13, 2.6 * nrow + 0.6), squeeze=False)
        fig, axes = figs[k]
        row = durations.index(T)
        data = {}
        for s in SHAPERS:
            t, th, tip, tau = simulate_flfj_arm(body, shapers[s], T, t1)
            data[s] = (th, tip, tau)
            key = f"{kt}_t{T:g}s_{s}"
            window = t >= t_window
            summary[f"residual_tip_vibration_{key}"] = float(np.max(np.abs(tip[window])))
            summary[f"settling_time_{key}"] = settling_time(t, th, tip)
            summary[f"theta_final_{key}"] = float(th[-1])
            summary[f"torque_max_{key}"] = float(np.max(np.abs(tau)))
            style = {"flfj": "-", "spong": "--", "unshaped": ":"}[s]
            label = {"flfj": "ZVD from FLFJ model", "spong": "ZVD from Spong model", "unshaped": "no shaper"}[s]
            axes[row, 0].plot(t, th, style, label=label)
            axes[row, 1].plot(t, tip * 1e3, style, label=label)
            axes[row, 2].plot(t, tau, style, label=label)
        with open(out_dir / f"control_{kt}_t{T:g}s.csv", "w", newline="") as fh:
            wr = csv.writer(fh)
            wr.writerow(["t_s"] + [f"{c}_{s}" for s in SHAPERS for c in ("theta_rad", "tip_m", "torque_Nm")])
            for j in range(t.size):
                wr.writerow([f"{t[j]:.6g}"] + [f"{data[s][c][j]:.8g}" for s in SHAPERS for c in range(3)])
        for c, lab in enumerate(("theta [rad]", "tip deflection [mm]", "torque [N m]")):
            axes[row, c].set_ylabel(lab)
            axes[row, c].grid(True, alpha=0.3)
            axes[row, c].axvline(t_move, color="k", lw=0.5)
        axes[row, 0].set_title(f"k = {k:g} N m/rad, move of 1 rad in {T:g} s", fontsize=9)
    for k, (fig, axes) in figs.items():
        axes[0, 1].legend(fontsize=7)
        for c in range(3):
            axes[-1, c].set_xlabel("t [s]")
        fig.tight_layout()
        fig.savefig(out_dir / f"control_{k_tag(k)}.png", dpi=110)
        plotting.close(fig)
    return summary
