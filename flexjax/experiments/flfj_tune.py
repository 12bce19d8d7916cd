r"""Gradient tuning of the FLFJ arm's PD gains and ZVD shaper times (seed 000 section 3.4,
what the paper could not do).

Plant and controller as in `flfj_control` (k = 1 N m/rad, the 2 mm steel rod, rotor
0.002 kg m², four transverse modes, no axial modes, undamped), but with the smooth
rest-to-rest (cycloidal) reference `RestToRest` of 1 rad over T = 1 s instead of the
ramp: the shaped reference must be differentiable in the impulse times, and the
ramp's kinks would make the objective only piecewise smooth in them.

**Parameters** (the optax leaves, all logarithms so they stay positive and Adam's step
is relative): $\log K_p$, $\log K_d$ and $\log h_i$, where $h_i$ is the half period of
mode i's ZVD (the time of its second impulse; the third is at $2h_i$). Amplitudes stay
the undamped ZVD's [1/4, 1/2, 1/4]; the four three-impulse shapers are convolved
(eq. 57). Start: $K_p = 0.6$, $K_d = 0.3$, $h_i = 1/(2 f_i)$ with the FLFJ frequencies
(the nominal ZVD of `flfj_control`).

**Objective** (`flexjax.models.flfj_arm.flfj_tuning_objective`; fixed horizon, fixed-step
Tsit5 with `TUNING_DT`, so the loss is a smooth function of the parameters and finite
differences check the gradient):
$J = \overline{w_{tip}^2}/s_w^2 + \overline{(\theta - 1)^2}/s_\theta^2 + \mu\,\overline{\tau^2}/s_\tau^2$,
means over the window $t \ge$ `T_WINDOW` (the end of the nominal shaped move: T plus
the nominal ZVD duration) for the first two terms and over the whole run for the
torque; $s_w$ = 1 mm, $s_\theta$ = 0.01 rad, $s_\tau$ = 0.01 N m, $\mu$ = 0.01. A
shaper made shorter than nominal is rewarded through the window (its move ends sooner).

**Summary**: `objective_initial`, `objective_tuned`, `kp`, `kd`, `shaper_time_1` ...
`shaper_time_4` (tuned half periods $h_i$, s) and their `_nominal` values,
`grad_fd_rel_err` (`tune.central_difference_check` at the start, along a fixed
direction touching every leaf), `tip_rms_initial`/`_tuned` (m, over the window),
`theta_rms_error_initial`/`_tuned` (rad), `steps`.
"""

import pathlib

import jax.numpy as jnp
import numpy as np
import optax

from flexjax import plotting
from flexjax.models.flfj_arm import KD, KP, TUNING_MOVE, flfj_arm, flfj_tuning_objective
from flexjax.tune import central_difference_check, minimize

NAME = "flfj_tune"
DESCRIPTION = "FLFJ arm: PD gains and ZVD impulse times tuned by gradient descent through the simulation"

K_JOINT = 1.0  # N m/rad
LEARNING_RATE = 0.03
STEPS, STEPS_QUICK = 30, 3


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Tune from the paper's controller; writes `tuning_history.png` and
    `tuned_response.png`. **Returns:** the summary (module docstring)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    body = flfj_arm(K_JOINT)
    f = np.asarray(body.frequencies())
    h0 = 1.0 / (2.0 * f)
    t_window = TUNING_MOVE + 2.0 * float(np.sum(h0))
    t_end = t_window + (1.5 if quick else 2.5)
    loss, parts = flfj_tuning_objective(body, t_end, t_window)
    params0 = {"log_kp": jnp.log(KP), "log_kd": jnp.log(KD), "log_h": jnp.log(jnp.asarray(h0))}
    direction = {"log_kp": jnp.asarray(0.3), "log_kd": jnp.asarray(-0.2), "log_h": jnp.array([0.1, -0.2, 0.15, -0.1])}
    fd_err = central_difference_check(loss, params0, direction, eps=1e-5)
    steps = STEPS_QUICK if quick else STEPS
    best, hist = minimize(loss, params0, optax.adam(LEARNING_RATE), steps, progress=progress)
    obj0, obj1 = float(hist["loss"][0]), float(loss(best))
    p0, p1 = [np.asarray(parts(p)) for p in (params0, best)]

    fig, ax = plotting.subplots(figsize=(6, 4))
    ax.semilogy(hist["loss"], "o-")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("objective J")
    ax.set_title("flfj_tune: Adam on log gains and log ZVD half periods")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "tuning_history.png", dpi=110)
    plotting.close(fig)

    fig, axes = plotting.subplots(1, 3, figsize=(13, 3.6))
    for p, lab, style in ((params0, "paper: Kp 0.6, Kd 0.3, nominal ZVD", "--"), (best, "tuned", "-")):
        t, theta, tip, tau = (np.asarray(a) for a in loss.response(p))
        axes[0].plot(t, theta, style, label=lab)
        axes[1].plot(t, 1e3 * tip, style, label=lab)
        axes[2].plot(t, tau, style, label=lab)
    for a, yl in zip(axes, ("theta [rad]", "tip deflection [mm]", "torque [N m]"), strict=False):
        a.axvline(t_window, color="k", lw=0.5)
        a.set_xlabel("t [s]")
        a.set_ylabel(yl)
        a.grid(True, alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "tuned_response.png", dpi=110)
    plotting.close(fig)

    summary = {
        "objective_initial": obj0,
        "objective_tuned": obj1,
        "kp": float(jnp.exp(best["log_kp"])),
        "kd": float(jnp.exp(best["log_kd"])),
        "kp_initial": KP,
        "kd_initial": KD,
        "grad_fd_rel_err": fd_err,
        "steps": steps,
        "window_start": t_window,
        "t_end": t_end,
        "tip_rms_initial": float(np.sqrt(p0[0])),
        "tip_rms_tuned": float(np.sqrt(p1[0])),
        "theta_rms_error_initial": float(np.sqrt(p0[1])),
        "theta_rms_error_tuned": float(np.sqrt(p1[1])),
        "torque_rms_initial": float(np.sqrt(p0[2])),
        "torque_rms_tuned": float(np.sqrt(p1[2])),
    }
    h1 = np.exp(np.asarray(best["log_h"]))
    for i in range(h1.size):
        summary[f"shaper_time_{i + 1}"] = float(h1[i])
        summary[f"shaper_time_{i + 1}_nominal"] = float(h0[i])
    return summary
