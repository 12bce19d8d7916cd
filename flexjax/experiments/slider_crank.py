r"""Slider-crank driven at constant crank speed.

The crank angle is prescribed, $\theta = \omega t$, so the slider position is fixed by
kinematics, $x_s = r\cos\theta + \sqrt{l^2 - r^2\sin^2\theta}$
(`models.slider_position_exact`); its error measures how well the index-3 solver keeps
the constraints. Also reports the driving torque and the run speed.
"""

import pathlib
import time

import jax
import numpy as np

import flexjax
from flexjax import models
from flexjax.plotting import plot_series

NAME = "slider_crank"
DESCRIPTION = "slider-crank at constant crank speed: slider position vs closed form, driving torque, steps/s"

CRANK = 0.2  # m
ROD = 0.6  # m
OMEGA = 2 * np.pi  # rad/s
MASSES = (1.0, 2.0, 0.5)  # kg: crank, rod, slider
G = 9.81  # m/s^2
DT = 1e-3  # s
T_END, T_END_QUICK = 4.0, 1.0  # s
SAVE_EVERY = 1  # check the slider position at every step
RHO_INF = 0.9
SLIDER_X = 8  # q = [crank r_i, r_j | rod r_i, r_j | slider x, y, phi]


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Simulate the slider-crank, write plots, `mechanism.gif` and `trajectory.npz` to `out_dir`.

    **Arguments:**

    - `out_dir`: folder for the output files (created if missing).
    - `quick`: simulate 1 s instead of 4 s.
    - `progress`: show a progress bar for the main run.

    **Returns:** the summary: `slider_position_error_max`, `constraint_residual_max`,
    `steps_per_second` (a second, already-compiled run), the driving torque range and
    the parameters (SI units).
    """
    out_dir = pathlib.Path(out_dir)
    t_end = T_END_QUICK if quick else T_END
    nsteps = round(t_end / DT)
    system = models.slider_crank(crank=CRANK, rod=ROD, omega=OMEGA, masses=MASSES, g=G)
    q0, v0 = models.slider_crank_state(crank=CRANK, rod=ROD, omega=OMEGA)
    solver = flexjax.GeneralizedAlpha(rho_inf=RHO_INF)

    def sim(show):
        return flexjax.simulate(system, q0, v0, t_end, DT, solver=solver, save_every=SAVE_EVERY, progress=show)

    traj = sim(progress)
    if progress:
        sim(False)  # the progress bar runs the loop in chunks; compile the one-piece loop timed below
    start = time.perf_counter()
    jax.block_until_ready(sim(False))
    elapsed = time.perf_counter() - start

    t = np.asarray(traj.t)
    x_sim = np.asarray(traj.q)[:, SLIDER_X]
    x_exact = np.asarray(models.slider_position_exact(OMEGA * t, crank=CRANK, rod=ROD))
    error = x_sim - x_exact
    # The driver row sin(theta - omega t) is the last constraint row; d Phi / d theta = 1 on the
    # constraint manifold, so the torque it applies to the crank is -lambda (M qdd + Phi_q^T lam = Q).
    torque = -np.asarray(traj.lam)[:, -1]

    traj.save(out_dir / "trajectory.npz")
    plot_series(
        t,
        [x_sim, x_exact],
        ["simulated", "exact"],
        out_dir / "slider_position.png",
        ylabel="slider x [m]",
        title=f"slider-crank, omega = {OMEGA:.4g} rad/s, dt = {DT} s",
    )
    plot_series(
        t,
        [error],
        ["simulated - exact"],
        out_dir / "slider_error.png",
        ylabel="slider x error [m]",
        title="slider position error",
    )
    traj.plot_diagnostics(out_dir / "diagnostics.png", title="slider-crank: energy and constraint residuals")
    traj.animate(system, out_dir / "mechanism.gif", fps=20, title="slider-crank")

    return {
        "slider_position_error_max": float(np.max(np.abs(error))),
        "constraint_residual_max": float(np.max(np.asarray(traj.constraint_residual))),
        "velocity_residual_max": float(np.max(np.asarray(traj.velocity_residual))),
        "driver_torque_min": float(np.min(torque)),
        "driver_torque_max": float(np.max(torque)),
        "steps_per_second": nsteps / elapsed,
        "timed_run_s": elapsed,
        "newton_iterations_max": int(np.max(np.asarray(traj.newton_iterations))),
        "crank_length": CRANK,
        "rod_length": ROD,
        "omega": OMEGA,
        "mass_crank": MASSES[0],
        "mass_rod": MASSES[1],
        "mass_slider": MASSES[2],
        "g": G,
        "dt": DT,
        "t_end": t_end,
        "nsteps": nsteps,
        "save_every": SAVE_EVERY,
        "rho_inf": RHO_INF,
    }
