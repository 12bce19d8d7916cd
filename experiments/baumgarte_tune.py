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

import flexjax
from flexjax import models, tune
from flexjax.analysis import stability
from flexjax.plotting import plot_series

from .mobile_robot import H, LOOKAHEAD, choose_pairs

NAME = "baumgarte_tune"
DESCRIPTION = "seed 003 beyond the paper: Baumgarte alpha, beta tuned by optax on the robot's real drift"

T_END, T_END_QUICK = 20.0, 6.0  # s
STEPS, STEPS_QUICK = 40, 8
LEARNING_RATE = 0.1  # in log(alpha), log(beta)
PENALTY = 1e3  # weight of the stability-region penalty
PENALTY_MARGIN = 0.05  # the penalty starts where rho exceeds 1 - PENALTY_MARGIN
DRIFT_SCALE = 1e-6  # m^2: J is reported in m^2, optimized as J / DRIFT_SCALE


def drift_objective(system, q0, v0, t_end):
    """`J(log_params)` of the module docstring (dimensionless: divided by DRIFT_SCALE)."""
    ts = jnp.linspace(0.0, t_end, round(t_end / H) + 1)

    def mean_square_drift(alpha, beta):
        tr = flexjax.simulate_ode(
            system, q0, v0, t_end, form=flexjax.UdwadiaKalaba(alpha, beta), solver=flexjax.RK4(),
            dt0=H, rtol=None, ts=ts, throw=False, consistent=False,
        )
        return jnp.mean(tr.constraint_residual**2)

    def loss(log_params):
        alpha, beta = jnp.exp(log_params[0]), jnp.exp(log_params[1])
        rho = jnp.maximum(
            stability.drift_amplification(stability.RK4, alpha, beta, H),
            jnp.abs(stability.RK4.stability_function(-2.0 * alpha * H)),
        )
        penalty = jnp.maximum(rho - (1 - PENALTY_MARGIN), 0.0) ** 2
        return mean_square_drift(alpha, beta) / DRIFT_SCALE + PENALTY * penalty

    return loss, mean_square_drift


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
    loss, msd = drift_objective(system, q0, v0, t_end)
    (alpha0, beta0), _ = choose_pairs()
    start = jnp.log(jnp.array([alpha0, beta0]))
    fd_err = tune.central_difference_check(jax.jit(loss), start, jnp.array([1.0, 1.0]) / np.sqrt(2), eps=1e-4)
    best, history = tune.minimize(loss, start, optax.adam(LEARNING_RATE), steps, progress=progress)
    alpha_t, beta_t = (float(x) for x in jnp.exp(best))
    drift_initial = float(jnp.sqrt(msd(alpha0, beta0)))
    drift_tuned = float(jnp.sqrt(msd(alpha_t, beta_t)))
    plot_series(np.arange(len(history["loss"])), [history["loss"]], ["J / 1e-6 m^2 (+ penalty)"],
                out_dir / "loss.png", xlabel="optimizer step", ylabel="objective", title="Baumgarte tuning", logy=True)
    np.savez(out_dir / "history.npz", **history)
    return {
        "alpha_tuned": alpha_t,
        "beta_tuned": beta_t,
        "drift_initial": drift_initial,
        "drift_tuned": drift_tuned,
        "grad_fd_rel_err": fd_err,
        "alpha_initial": float(alpha0),
        "beta_initial": float(beta0),
        "amplification_tuned": max(
            float(stability.drift_amplification(stability.RK4, alpha_t, beta_t, H)),
            float(abs(stability.RK4.stability_function(-2.0 * alpha_t * H))),
        ),
        "h": H,
        "t_end": t_end,
        "optimizer_steps": steps,
        "learning_rate": LEARNING_RATE,
    }
