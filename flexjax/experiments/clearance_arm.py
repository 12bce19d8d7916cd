r"""Two-link flexible arm with a clearance elbow tracking a circle (seed 002 §4, Figs. 6-7).

The model is `flexjax.models.clearance_arm` (planar ANCF links of 0.4 m / 2 elements
and 1.6 m / 4 elements, PID on both joint angles, circle of centre (1.55, 0) m and
radius 0.25 m traversed once in 10 s at eq. 26's rate). Runs:

- Fig. 6: the ideal elbow, and clearances c = 0.01, 0.2, 0.5 mm (friction 0.1),
  E = 30 GPa;
- Fig. 7: E = 3, 30, 300 GPa at c = 0.5 mm.

The five clearance runs share one compiled, vmapped batch (`run_batch`). Generalized-α,
ρ∞ = 0.8, h = 1e-4 s (2e-4 s and 1 s with `--quick`), states saved every 1 ms. The tip
error is actual minus desired tip position; `tip_error_max_*` is its largest norm over
the run (m).
"""

import pathlib
import time

import jax
import numpy as np

from flexjax import plotting
from flexjax.batch import run_batch
from flexjax.models.clearance_arm import (
    DURATION,
    clearance_arm,
    penetration,
    responses,
    simulate_arm,
    with_parameters,
)

NAME = "clearance_arm"
DESCRIPTION = (
    "two-link ANCF arm with a clearance elbow under PID tracking: clearance and stiffness (seed 002 Figs. 6-7)"
)

CASES = {  # suffix: (clearance m, Young's modulus Pa)
    "c001": (0.01e-3, 30e9),
    "c02": (0.2e-3, 30e9),
    "c05": (0.5e-3, 30e9),
    "e3": (0.5e-3, 3e9),
    "e300": (0.5e-3, 300e9),
}
SAVE_DT = 1e-3


def _settings(quick):
    return (1.0, 2e-4) if quick else (DURATION, 1e-4)


def run_cases(t1, h, cases=CASES, progress=False, animation=None):
    """Ideal arm and the clearance `cases` (one vmapped batch); returns a dict
    suffix -> (t, tip error, tip acceleration, torques, penetration) as NumPy arrays,
    and the wall time of the batch (s). With `animation` (a path), the ideal arm's
    motion is written there."""
    save_every = max(1, round(SAVE_DT / h))
    ideal = clearance_arm()
    traj = simulate_arm(ideal, t1, h, save_every=save_every, progress=progress)
    if animation is not None:
        traj.animate(ideal, animation, fps=20, speed=2.0, title="two-link ANCF arm tracking a circle (ideal elbow)")
    out = {"ideal": (np.asarray(traj.t),) + tuple(np.asarray(x) for x in responses(ideal, traj)) + (None,)}
    template = clearance_arm(clearance=0.5e-3)

    def one(p):
        system = with_parameters(template, p[0], p[1])
        tr = simulate_arm(system, t1, h, save_every=save_every, throw=False)
        pen = jax.vmap(lambda q: penetration(system, q))(tr.q)
        return responses(system, tr) + (pen, tr.succeeded)

    params = np.array(list(cases.values()))
    start = time.perf_counter()
    res = run_batch(one, params, chunk_size=len(params), progress=progress)
    wall = time.perf_counter() - start
    for k, name in enumerate(cases):
        if not bool(res[4][k]):
            raise RuntimeError(f"clearance_arm: the run {name} failed (Newton did not converge).")
        out[name] = (out["ideal"][0],) + tuple(r[k] for r in res[:4])
    return out, wall


def _figure(runs, names, labels, title, path):
    fig, axes = plotting.subplots(3, 2, figsize=(11, 9), sharex=True)
    rows = (("tip error", "m", 1), ("tip acceleration", "m/s²", 2), ("torque", "N m", 3))
    for r, (what, unit, i) in enumerate(rows):
        for c in range(2):
            ax = axes[r, c]
            for name, label in zip(names, labels, strict=False):
                t, y = runs[name][0], runs[name][i]
                ax.plot(t, y[:, c], label=label, lw=0.9)
            comp = ("x", "y")[c] if i < 3 else ("τ1", "τ2")[c]
            ax.set_ylabel(f"{what} {comp} [{unit}]")
            ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plotting.close(fig)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Run the six cases; write `fig6_clearance.png`, `fig7_stiffness.png`, `runs.npz` and
    `arm.gif` (the ideal arm's motion).

    **Returns:** `tip_error_max_ideal`, `tip_error_max_c001`, `tip_error_max_c02`,
    `tip_error_max_c05`, `tip_error_max_e3`, `tip_error_max_e30` (= the c05 run),
    `tip_error_max_e300` (m); `torque1_max_*`, `torque2_max_*` (N m) and
    `penetration_max_*` (m) of the same runs; `t_end`, `h` (s), `batch_wall_time` (s).
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t1, h = _settings(quick)
    runs, wall = run_cases(t1, h, progress=progress, animation=out_dir / "arm.gif")
    runs["e30"] = runs["c05"]
    np.savez_compressed(
        out_dir / "runs.npz",
        **{
            f"{k}_{f}": v
            for k, r in runs.items()
            for f, v in zip(("t", "error", "accel", "torque", "pen"), r, strict=False)
            if v is not None
        },
    )
    _figure(
        runs,
        ["ideal", "c001", "c02", "c05"],
        ["ideal joint", "c = 0.01 mm", "c = 0.2 mm", "c = 0.5 mm"],
        "seed 002 Fig. 6: clearance (E = 30 GPa, c_f = 0.1)",
        out_dir / "fig6_clearance.png",
    )
    _figure(
        runs,
        ["e3", "e30", "e300"],
        ["E = 3 GPa", "E = 30 GPa", "E = 300 GPa"],
        "seed 002 Fig. 7: link stiffness (c = 0.5 mm)",
        out_dir / "fig7_stiffness.png",
    )
    summary = {}
    for name, (_t, err, _acc, tau, pen) in runs.items():
        summary[f"tip_error_max_{name}"] = float(np.max(np.linalg.norm(err, axis=1)))
        summary[f"torque1_max_{name}"] = float(np.max(np.abs(tau[:, 0])))
        summary[f"torque2_max_{name}"] = float(np.max(np.abs(tau[:, 1])))
        if pen is not None:
            summary[f"penetration_max_{name}"] = float(np.max(pen))
    summary.update(t_end=t1, h=h, batch_wall_time=wall)
    return summary
