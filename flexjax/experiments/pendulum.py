r"""Rigid NCF pendulum released from rest at a small angle.

Checks the period against small-amplitude theory $T_0 = 2\pi\sqrt{2L/(3g)}$ and its
first amplitude correction $T \approx T_0 (1 + \theta_0^2/16)$, the energy drift of
generalized-α with $\rho_\infty = 1$ (no numerical damping) and the constraint residual.
"""

import pathlib

import numpy as np

import flexjax
from flexjax import models
from flexjax.plotting import plot_series

NAME = "pendulum"
DESCRIPTION = "rigid bar pendulum, small-angle release: period vs theory, energy drift (generalized-alpha)"

MASS = 1.0  # kg
LENGTH = 1.0  # m
G = 9.81  # m/s^2
THETA0 = 0.05  # rad, from the downward vertical
DT = 1e-3  # s
T_END, T_END_QUICK = 10.0, 3.0  # s
SAVE_EVERY = 5
RHO_INF = 1.0


def bar_angle(q: np.ndarray) -> np.ndarray:
    r"""Angle of the bar from the downward vertical (rad), counter-clockwise positive.

    **Arguments:** `q`: saved coordinates `[r_i, r_j]`, shape `(ns, 4)`.

    **Returns:** $\theta = \operatorname{atan2}(x_j - x_i,\ -(y_j - y_i))$, shape `(ns,)`.
    """
    d = q[:, 2:4] - q[:, 0:2]
    return np.arctan2(d[:, 0], -d[:, 1])


def zero_crossing_period(t: np.ndarray, x: np.ndarray) -> tuple[float, int]:
    """Mean period from successive same-direction zero crossings of `x(t)`.

    Crossing times are found by linear interpolation between the saved samples; the
    intervals between successive upward crossings and between successive downward
    crossings are averaged together.

    **Returns:** `(period, number of intervals averaged)`.
    **Raises:** `ValueError` when no direction has two crossings (run longer).
    """

    def crossings(mask):
        i = np.nonzero(mask)[0]
        return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])

    up = crossings((x[:-1] < 0) & (x[1:] >= 0))
    down = crossings((x[:-1] > 0) & (x[1:] <= 0))
    intervals = np.concatenate([np.diff(up), np.diff(down)])
    if intervals.size == 0:
        raise ValueError(
            f"zero_crossing_period: found {up.size} upward and {down.size} downward crossings; "
            "need two in the same direction, so simulate at least one full period."
        )
    return float(np.mean(intervals)), int(intervals.size)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Simulate the pendulum, write plots and `trajectory.npz` to `out_dir`.

    **Arguments:**

    - `out_dir`: folder for the output files (created if missing).
    - `quick`: simulate 3 s instead of 10 s.
    - `progress`: show a progress bar.

    **Returns:** the summary: `period`, `period_exact`, `period_rel_error`,
    `period_amplitude_corrected`, `period_rel_error_amplitude_corrected`,
    `energy_drift_rel`, `constraint_residual_max` and the parameters (SI units).
    """
    out_dir = pathlib.Path(out_dir)
    t_end = T_END_QUICK if quick else T_END
    system = models.pendulum(mass=MASS, length=LENGTH, g=G)
    q0, v0 = models.pendulum_state(THETA0, length=LENGTH)
    solver = flexjax.GeneralizedAlpha(rho_inf=RHO_INF)
    traj = flexjax.simulate(system, q0, v0, t_end, DT, solver=solver, save_every=SAVE_EVERY, progress=progress)

    t, theta = np.asarray(traj.t), bar_angle(np.asarray(traj.q))
    period, nintervals = zero_crossing_period(t, theta)
    period_exact = float(models.pendulum_period(mass=MASS, length=LENGTH, g=G))
    # first term of the large-amplitude series T = T0 (1 + theta0^2/16 + 11 theta0^4/3072 + ...)
    period_corrected = period_exact * (1 + THETA0**2 / 16)
    # the potential datum is the pivot, so E(0) = -m g L cos(theta0) / 2 is nonzero
    energy = np.asarray(traj.energy)
    energy_drift_rel = float(np.max(np.abs(energy - energy[0])) / abs(energy[0]))

    traj.save(out_dir / "trajectory.npz")
    plot_series(
        t,
        [theta],
        ["theta (simulated)"],
        out_dir / "angle.png",
        ylabel="bar angle [rad]",
        title=f"pendulum, theta0 = {THETA0} rad, dt = {DT} s",
    )
    traj.plot_diagnostics(out_dir / "diagnostics.png", title="pendulum: energy and constraint residuals")

    return {
        "period": period,
        "period_exact": period_exact,
        "period_rel_error": abs(period - period_exact) / period_exact,
        "period_amplitude_corrected": period_corrected,
        "period_rel_error_amplitude_corrected": abs(period - period_corrected) / period_corrected,
        "period_intervals": nintervals,
        "energy_initial": float(energy[0]),
        "energy_drift_rel": energy_drift_rel,
        "constraint_residual_max": float(np.max(np.asarray(traj.constraint_residual))),
        "velocity_residual_max": float(np.max(np.asarray(traj.velocity_residual))),
        "mass": MASS,
        "length": LENGTH,
        "g": G,
        "theta0": THETA0,
        "dt": DT,
        "t_end": t_end,
        "save_every": SAVE_EVERY,
        "rho_inf": RHO_INF,
    }
