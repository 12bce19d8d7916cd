r"""The very flexible pendulum (Berzeri & Shabana 2000) with planar ANCF beams
(`flexjax.models.flexible_pendulum`).

A beam (stretch measure; L = 1.2 m, A = 0.0018 m², I = 1.215e-8 m⁴, ρ = 5540 kg/m³,
E = 0.7 MPa) is pinned at the origin (`AncfPin` at node 0) and released from rest,
straight along +x, under gravity g = 9.81 m/s². Generalized-α with ρ∞ = 1 (no numerical
damping), plain index-3 form: the pin rows are linear in the ANCF coordinates, so the
pinned coordinates are fixed exactly, their velocities and accelerations are exactly
zero and the weak instability of the index-3 trapezoidal rule on nonlinear constraints
does not arise (`index2=True` gives the same numbers here).

Reported: the tip at t = 1 s, the energy error $\max_t|E(t) - E(0)|/(m g L/2)$ (E(0) = 0
with the pivot as datum, so the drift is scaled by the potential-energy drop of the
rigid pendulum falling to the vertical) and the change of the tip position under mesh
refinement (n/2, n, 2n elements) and step refinement (2h, h, h/2).
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from flexjax import plotting
from flexjax.models.flexible_pendulum import (
    AREA,
    LENGTH,
    RHO,
    RHO_INF,
    SECOND_MOMENT,
    T_END,
    YOUNGS,
    G,
    flexible_pendulum,
    simulate_flexible_pendulum,
)
from flexjax.plotting import finish_axes

NAME = "flexible_pendulum"
DESCRIPTION = "very flexible ANCF pendulum (stretch measure, E = 0.7 MPa): energy, mesh and step convergence"

ELEMENTS, ELEMENTS_QUICK = 16, 4
DT, DT_QUICK = 5e-4, 2e-3  # s
SHAPE_TIMES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # s


def _energy_scale():
    return RHO * AREA * LENGTH * G * LENGTH / 2


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Simulate the pendulum (main run plus refinements); write `shapes.png`,
    `energy.png`, `diagnostics.png`, `pendulum.gif` and `trajectory.npz` to `out_dir`.

    **Arguments:** `out_dir` (created if missing); `quick`: 4 elements and h = 2 ms
    instead of 16 and 0.5 ms (still 1 s); `progress`: progress bars.

    **Returns:** `tip_x_1s`, `tip_y_1s` (m), `energy_drift_rel`, `elements`, `h` (s),
    the tip changes under refinement `tip_change_mesh_coarse` (n/2 -> n),
    `tip_change_mesh_fine` (n -> 2n), `tip_change_step_coarse` (2h -> h),
    `tip_change_step_fine` (h -> h/2) in m, and the parameters.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    n, h = (ELEMENTS_QUICK, DT_QUICK) if quick else (ELEMENTS, DT)
    beam, traj = simulate_flexible_pendulum(n, h, progress)
    tip = lambda b, tr: np.asarray(b.node_position(tr.q[-1], -1))
    tip_main = tip(beam, traj)
    runs = {"mesh": [], "step": []}
    for m in (n // 2, 2 * n):
        runs["mesh"].append(tip(*simulate_flexible_pendulum(m, h, progress)))
    for dt in (2 * h, h / 2):
        runs["step"].append(tip(*simulate_flexible_pendulum(n, dt, progress)))
    change = lambda a, b: float(np.linalg.norm(a - b))

    t = np.asarray(traj.t)
    energy = np.asarray(traj.energy)
    scale = _energy_scale()
    q, v = traj.q, traj.v
    M = beam.mass_matrix(q[0])
    kinetic = np.asarray(0.5 * jnp.einsum("ti,ij,tj->t", v, M, v))
    elastic = np.asarray(jax.vmap(beam.potential_energy)(q))
    gravity = energy - kinetic - elastic
    traj.save(out_dir / "trajectory.npz")
    traj.plot_diagnostics(out_dir / "diagnostics.png", title="flexible pendulum: energy and constraint residuals")
    traj.animate(
        flexible_pendulum(n)[1], out_dir / "pendulum.gif", fps=20, title=f"very flexible pendulum, {n} ANCF elements"
    )
    s = jnp.linspace(0.0, LENGTH, 61)
    shape = lambda qk: jax.vmap(lambda si: beam.position(qk, si[None]))(s)
    fig, ax = plotting.subplots(figsize=(6, 5.5))
    for ts in SHAPE_TIMES:
        k = int(np.argmin(np.abs(t - ts)))
        xy = np.asarray(shape(q[k]))
        ax.plot(xy[:, 0], xy[:, 1], label=f"t = {t[k]:.1f} s")
    ax.plot([0], [0], "ko")
    ax.set_aspect("equal")
    finish_axes(
        fig,
        ax,
        out_dir / "shapes.png",
        xlabel="x [m]",
        ylabel="y [m]",
        title=f"very flexible pendulum, {n} ANCF elements, h = {h:g} s",
        legend_size=8,
    )
    fig, ax = plotting.subplots(figsize=(7, 4))
    for y, label in ((kinetic, "kinetic"), (gravity, "gravity"), (elastic, "elastic"), (energy, "total")):
        ax.plot(t, y, label=label)
    finish_axes(
        fig,
        ax,
        out_dir / "energy.png",
        xlabel="t [s]",
        ylabel="energy [J]",
        title=f"energy; max |E - E(0)| / (m g L/2) = {np.max(np.abs(energy - energy[0])) / scale:.2e}",
    )

    return {
        "tip_x_1s": float(tip_main[0]),
        "tip_y_1s": float(tip_main[1]),
        "energy_drift_rel": float(np.max(np.abs(energy - energy[0])) / scale),
        "elements": n,
        "h": h,
        "tip_change_mesh_coarse": change(runs["mesh"][0], tip_main),
        "tip_change_mesh_fine": change(runs["mesh"][1], tip_main),
        "tip_change_step_coarse": change(runs["step"][0], tip_main),
        "tip_change_step_fine": change(runs["step"][1], tip_main),
        "elastic_energy_max": float(np.max(elastic)),
        "constraint_residual_max": float(np.max(np.asarray(traj.constraint_residual))),
        "length": LENGTH,
        "area": AREA,
        "second_moment": SECOND_MOMENT,
        "rho": RHO,
        "youngs": YOUNGS,
        "g": G,
        "t_end": T_END,
        "rho_inf": RHO_INF,
    }
