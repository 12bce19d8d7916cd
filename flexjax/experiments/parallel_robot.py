r"""3-RRPaR parallel robot with flexible parallelogram rods (seed 001 §3, Figs. 8-11).

The model is `flexjax.models.parallel_robot` (Delta-type geometry, Ti-6Al-4V rods of
8 mm diameter and 0.5 m, ν = 0.34, 2 ANCF elements per rod; see `docs/parallel_robot.md`). The
platform centre follows a horizontal circle of radius 0.1 m at z = -0.4 m, one
cycloidal revolution in 1 s, driven through the inverse kinematics of the three arm
angles (rheonomic constraints, seed eq. 26). Generalized-α, h = 0.002 s, ρ∞ = 0.7
(seed §3.2), modified Newton (`parallel_robot_solver`); the rigid mechanism (rigid rods,
rank-deficient $\Phi_q$) is solved with least-squares Newton steps. Rod moduli E = 116, 10,
1 GPa at ν = 0.34, and E = 116 GPa at ν = 0 for comparison (suffix `_nu0`); each flexible run starts from its static
equilibrium under gravity.

Errors are flexible minus rigid at the same instants (position, velocity,
acceleration of the platform centre); `*_error_max_*` is the largest norm over the
run; suffixes `_e116`, `_e10`, `_e1` are ν = 0.34 (`rod_poisson`), `_e116_nu0` is
E = 116 GPa with ν = 0. `von_mises_max_chain*` is the largest von Mises stress of the
two rods of each chain at E = 116 GPa, ν = 0.34 (`_nu0`: ν = 0; element mid-points,
8 points on the section perimeter).
`--quick` runs 0.1 s instead of 1 s.
"""

import pathlib
import time

import equinox as eqx
import jax
import numpy as np

import flexjax  # noqa: F401  (float64)
from flexjax import plotting, simulate
from flexjax.models.parallel_robot import (
    MATERIALS,
    PERIOD,
    PlatformCirclePath,
    initial_state,
    parallel_robot,
    parallel_robot_solver,
    platform_response,
    rod_von_mises,
    simulate_parallel_robot,
)

NAME = "parallel_robot"
DESCRIPTION = (
    "3-RRPaR robot, flexible Ti-6Al-4V ANCF rods (nu = 0.34) E = 116/10/1 GPa vs rigid: "
    "platform errors, rod stress (seed 001 Figs. 8-11)"
)

MODULI = {"e116": 116e9, "e10": 10e9, "e1": 1e9}
# (E, nu) per flexible run: the rods' real material, and nu = 0 at E = 116 GPa
CASES = {name: (E, MATERIALS["rod_poisson"]) for name, E in MODULI.items()} | {"e116_nu0": (116e9, 0.0)}
H = 0.002


def _settings(quick):
    return 0.1 if quick else PERIOD


def run_cases(t1, h=H, progress=False, animation=None):
    """Rigid reference and the flexible runs; returns `(runs, info)` with `runs[name] =
    (t, position, velocity, acceleration, von Mises per chain)` as NumPy arrays and
    `info` the model sizes and wall times. With `animation` (a path), the most flexible
    run's motion is written there."""
    runs, info = {}, {}
    rigid = parallel_robot(rigid=True)
    start = time.perf_counter()
    tr = simulate_parallel_robot(rigid, t1, h, rigid=True, progress=progress)
    info["wall_rigid"] = time.perf_counter() - start
    runs["rigid"] = (np.asarray(tr.t),) + tuple(np.asarray(x) for x in platform_response(rigid, tr)) + (None,)
    info["rigid_residual"] = float(tr.constraint_residual.max())
    template = parallel_robot()
    info["n_coordinates"], info["n_constraints"] = template.nq, template.nconstraints
    info["n_coordinates_rigid"], info["n_constraints_rigid"] = rigid.nq, rigid.nconstraints
    for name, (E, nu) in CASES.items():
        system = parallel_robot(E, poisson=nu)
        start = time.perf_counter()
        q0, v0 = jax.block_until_ready(initial_state(system))
        info[f"static_{name}"] = time.perf_counter() - start
        start = time.perf_counter()
        tr = simulate(system, q0, v0, t1, h, solver=parallel_robot_solver(False), progress=progress)
        jax.block_until_ready(tr.q)
        info[f"wall_{name}"] = time.perf_counter() - start
        info[f"iterations_{name}"] = float(np.mean(np.asarray(tr.newton_iterations)[1:]))
        vm = _von_mises(system, tr.q)
        if animation is not None and E == min(e for e, _ in CASES.values()):
            tr.animate(system, animation, fps=20, max_frames=120, title=f"3-RRPaR robot, rods E = {E / 1e9:g} GPa")
        runs[name] = (
            (np.asarray(tr.t),) + tuple(np.asarray(x) for x in platform_response(system, tr)) + (np.asarray(vm),)
        )
    return runs, info


@eqx.filter_jit
def _von_mises(system, q):
    return jax.vmap(lambda qq: rod_von_mises(system, qq))(q)


def _response_figure(runs, index, what, unit, path, fig_name):
    fig, axes = plotting.subplots(3, 2, figsize=(11, 8.5), sharex=True)
    t = runs["rigid"][0]
    for c, comp in enumerate("xyz"):
        ax = axes[c, 0]
        ax.plot(t, runs["rigid"][index][:, c], "k", lw=2.2, label="rigid")
        for name in MODULI:
            ax.plot(t, runs[name][index][:, c], lw=0.9, label=f"E = {MODULI[name] / 1e9:g} GPa")
        ax.set_ylabel(f"{what} {comp} [{unit}]")
        ax = axes[c, 1]
        for name in MODULI:
            ax.plot(
                t, runs[name][index][:, c] - runs["rigid"][index][:, c], lw=0.9, label=f"E = {MODULI[name] / 1e9:g} GPa"
            )
        ax.set_ylabel(f"error {comp} [{unit}]")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=8)
    axes[0, 1].legend(fontsize=8)
    fig.suptitle(f"seed 001 {fig_name}: platform {what} (left) and error vs the rigid mechanism (right)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plotting.close(fig)


def _stress_figure(runs, path):
    fig, axes = plotting.subplots(3, 1, figsize=(8, 8), sharex=True)
    for k, ax in enumerate(axes):
        for name in MODULI:
            ax.plot(runs[name][0], runs[name][4][:, k] / 1e6, lw=0.9, label=f"E = {MODULI[name] / 1e9:g} GPa")
        ax.set_ylabel(f"chain {k + 1} σ_vM [MPa]")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle("seed 001 Fig. 11: largest von Mises stress of each chain's rods")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plotting.close(fig)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Run the rigid mechanism, E = 116, 10, 1 GPa (ν = 0.34) and E = 116 GPa (ν = 0); write `fig8_displacement.png`,
    `fig9_velocity.png`, `fig10_acceleration.png`, `fig11_von_mises.png`, `runs.npz` and `robot.gif`
    (the E = 1 GPa run's motion).

    **Returns:** the keys listed in the module docstring plus `circle_error_rigid` (m,
    the rigid platform against the prescribed circle), `rigid_constraint_residual`,
    `newton_iterations_mean_*`, `rod_poisson`, `t_end`, `h` (s), `static_solve_s` (the E = 10 GPa
    static equilibrium, s) and `steps_per_second`: steps over the wall time of the
    E = 10 GPa `simulate` call, compiled by the E = 116 GPa run before it (it includes
    the initial projection, the diagnostics and the progress-bar chunking; the bare
    step loop is timed by `benchmarks/bench_robot.py`).
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t1 = _settings(quick)
    runs, info = run_cases(t1, progress=progress, animation=out_dir / "robot.gif")
    fields = ("t", "position", "velocity", "acceleration", "von_mises")
    np.savez_compressed(
        out_dir / "runs.npz",
        **{f"{k}_{f}": v for k, r in runs.items() for f, v in zip(fields, r, strict=False) if v is not None},
    )
    for index, what, unit, fig, file in (
        (1, "displacement", "m", "Fig. 8", "fig8_displacement.png"),
        (2, "velocity", "m/s", "Fig. 9", "fig9_velocity.png"),
        (3, "acceleration", "m/s²", "Fig. 10", "fig10_acceleration.png"),
    ):
        _response_figure(runs, index, what, unit, out_dir / file, fig)
    _stress_figure(runs, out_dir / "fig11_von_mises.png")
    circle = np.asarray(jax.vmap(PlatformCirclePath())(runs["rigid"][0]))
    summary = {"n_coordinates": info["n_coordinates"], "n_constraints": info["n_constraints"]}
    for key, index in (("position", 1), ("velocity", 2), ("acceleration", 3)):
        for name in CASES:
            err = runs[name][index] - runs["rigid"][index]
            summary[f"{key}_error_max_{name}"] = float(np.max(np.linalg.norm(err, axis=1)))
    for k in range(3):
        summary[f"von_mises_max_chain{k + 1}"] = float(np.max(runs["e116"][4][:, k]))
        summary[f"von_mises_max_chain{k + 1}_nu0"] = float(np.max(runs["e116_nu0"][4][:, k]))
    summary["rod_poisson"] = MATERIALS["rod_poisson"]
    nsteps = round(t1 / H)
    summary["steps_per_second"] = nsteps / info["wall_e10"]  # compiled by the E = 116 GPa run
    summary["static_solve_s"] = info["static_e10"]
    summary["circle_error_rigid"] = float(np.max(np.linalg.norm(runs["rigid"][1] - circle, axis=1)))
    summary["rigid_constraint_residual"] = info["rigid_residual"]
    for name in CASES:
        summary[f"newton_iterations_mean_{name}"] = info[f"iterations_{name}"]
    summary.update(
        t_end=t1, h=H, n_coordinates_rigid=info["n_coordinates_rigid"], n_constraints_rigid=info["n_constraints_rigid"]
    )
    return summary
