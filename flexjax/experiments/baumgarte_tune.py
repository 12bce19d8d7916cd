r"""Baumgarte parameters tuned by gradient descent on the actual constraint drift.

Objective (mobile robot of `mobile_robot`, RK4, h = 0.1 s, 20 s):
$J(\alpha, \beta) = \frac{1}{T}\int_0^T |\Phi|^2 dt + \mu\,\max(\rho - (1 - m), 0)^2$,
with $\rho$ the largest $|R(h\lambda)|$ over the holonomic drift roots and the
nonholonomic root $-2\alpha$ (`mobile_robot.amplification`), margin $m = 0.05$, so the
pair stays inside the stability region. The start is the stability-based pair of
`mobile_robot` (fastest continuous decay with a 50 % margin). $\alpha, \beta$ are optimized in log space (positive) with
Adam; gradients go through the diffrax RK4 solve (recursive checkpointing) and are checked
against central differences at the start point.
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import optax

from flexjax import models, tune
from flexjax.analysis import stability
from flexjax.plotting import plot_series

from .mobile_robot import LOOKAHEAD, H, choose_pairs

NAME = "baumgarte_tune"
DESCRIPTION = "seed 003 beyond the paper: Baumgarte alpha, beta tuned by optax on the robot's real drift"

T_END, T_END_QUICK = 20.0, 6.0  # s
STEPS, STEPS_QUICK = 40, 8
LEARNING_RATE = 0.1  # in log(alpha), log(beta)
SLIDER_H, SLIDER_T, SLIDER_T_QUICK = 0.01, 4.0, 1.0  # s: the holonomic example


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Tune (alpha, beta) from the stability-based pair; plot the loss history.

    **Returns:** `alpha_tuned`, `beta_tuned`, `drift_initial`, `drift_tuned` (RMS
    program-constraint error over the run, m), `grad_fd_rel_err` (autodiff vs central
    difference of the objective at the start, along (1, 1) in log space), the start pair
    and the number of optimizer steps.
    """
    out_dir = pathlib.Path(out_dir)
    t_end = T_END_QUICK if quick else T_END
    steps = STEPS_QUICK if quick else STEPS
    system = models.mobile_robot(lookahead=LOOKAHEAD)
    q0, v0 = models.mobile_robot_state(lookahead=LOOKAHEAD)
    loss, msd = tune.baumgarte_objective(system, q0, v0, t_end, H)
    (alpha0, beta0), _ = choose_pairs()
    start = jnp.log(jnp.array([alpha0, beta0]))
    fd_err = tune.central_difference_check(jax.jit(loss), start, jnp.array([1.0, 1.0]) / np.sqrt(2), eps=1e-4)
    best, history = tune.minimize(loss, start, optax.adam(LEARNING_RATE), steps, progress=progress)
    alpha_t, beta_t = (float(x) for x in jnp.exp(best))
    drift_initial = float(jnp.sqrt(msd(alpha0, beta0)))
    drift_tuned = float(jnp.sqrt(msd(alpha_t, beta_t)))
    slider = _slider_crank(quick, steps, progress)
    plot_series(
        np.arange(len(history["loss"])),
        [history["loss"]],
        ["J / 1e-6 m^2 (+ penalty)"],
        out_dir / "loss.png",
        xlabel="optimizer step",
        ylabel="objective",
        title="Baumgarte tuning",
        logy=True,
    )
    np.savez(out_dir / "history.npz", **history)
    return slider | {
        "alpha_tuned": alpha_t,
        "beta_tuned": beta_t,
        "drift_initial": drift_initial,
        "drift_tuned": drift_tuned,
        "grad_fd_rel_err": fd_err,
        "alpha_initial": float(alpha0),
        "beta_initial": float(beta0),
        "amplification_tuned": float(loss.amplification(alpha_t, beta_t)),
        "h": H,
        "t_end": t_end,
        "optimizer_steps": steps,
        "learning_rate": LEARNING_RATE,
    }


def _slider_crank(quick, steps, progress):
    """The holonomic example: slider-crank, UK + RK4 at h = 0.01 s; uncorrected, the
    stability-recommended pair (fastest decay, 50 % margin) and the tuned pair."""
    t_end = SLIDER_T_QUICK if quick else SLIDER_T
    system = models.slider_crank()
    q0, v0 = models.slider_crank_state()
    loss, msd = tune.baumgarte_objective(system, q0, v0, t_end, SLIDER_H)
    rec = stability.recommend(stability.RK4_TABLEAU, SLIDER_H, 0.5)
    # start well inside the region: the recommended pair scaled down ten times
    start = jnp.log(jnp.array([rec.alpha, rec.beta]) / 10)
    best, _ = tune.minimize(loss, start, optax.adam(LEARNING_RATE), steps, progress=progress)
    alpha_t, beta_t = (float(x) for x in jnp.exp(best))
    rms = lambda a, b: float(jnp.sqrt(msd(a, b)))
    return {
        "slider_crank_h": SLIDER_H,
        "slider_crank_drift_uncorrected": rms(0.0, 0.0),
        "slider_crank_alpha_recommended": rec.alpha,
        "slider_crank_beta_recommended": rec.beta,
        "slider_crank_drift_recommended": rms(rec.alpha, rec.beta),
        "slider_crank_alpha_tuned": alpha_t,
        "slider_crank_beta_tuned": beta_t,
        "slider_crank_drift_tuned": rms(alpha_t, beta_t),
    }
