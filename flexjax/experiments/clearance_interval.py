r"""Interval uncertainty of the clearance arm (seed 002 §3-4, Fig. 8).

Clearance c ∈ [0.1, 0.5] mm and Young's modulus E ∈ [20, 30] GPa of both links are
interval parameters. N Latin-hypercube samples (256; 16 with `--quick`) of the arm of
`flexjax.models.clearance_arm` run as one vmapped batch (`interval_analysis`, chunks
of 64 written to `out_dir/batch/` so an interrupted run resumes), and the upper and
lower envelopes of the tip error (x, y), the tip acceleration and the joint torques
are plotted. Generalized-α, ρ∞ = 0.8, h = 5e-4 s over 10 s (1 s with `--quick`); at this
step the tip error differs from an h = 1e-4 s run by < 1e-6 m (`clearance_arm`), the
impact spikes of the acceleration are smoothed.

Beyond sampling, the largest tip error over the first `SEARCH_HORIZON` seconds (the
impact transient) is maximized over the box by the vertex method (4 corners) and by a
projected-Adam gradient search through the simulation (`extreme_search`), and compared
with the sampled maximum of the same response.
"""

import json
import pathlib

import jax.numpy as jnp
import numpy as np

from flexjax import plotting
from flexjax.analysis.interval import Interval, default_optimizer, extreme_search, interval_analysis, vertex_method
from flexjax.models.clearance_arm import DURATION, clearance_arm, responses, simulate_arm, with_parameters

NAME = "clearance_interval"
DESCRIPTION = (
    "clearance arm with interval clearance and stiffness: batched envelopes + gradient search (seed 002 Fig. 8)"
)

BOX = Interval([0.1e-3, 20e9], [0.5e-3, 30e9], names=("clearance", "youngs"))
H = 5e-4
SAVE_DT = 5e-3
SEARCH_HORIZON, SEARCH_HORIZON_QUICK = 1.0, 0.3  # s
SEARCH_STEPS, SEARCH_STEPS_QUICK, SEARCH_STARTS = 10, 3, 2
SEARCH_RATE = 0.2  # Adam step in the unit box: a few steps can cross it


def _arm_outputs(t1, save_every):
    template = clearance_arm(clearance=0.5e-3)

    def fn(p):
        system = with_parameters(template, p[0], p[1])
        tr = simulate_arm(system, t1, H, save_every=save_every, throw=False)
        error, accel, torque = responses(system, tr)
        return {"t": tr.t, "error": error, "accel": accel, "torque": torque, "ok": tr.succeeded}

    return fn


def _peak_error(t1):
    """Scalar response: largest tip-error norm over [0, t1] (every step saved)."""
    template = clearance_arm(clearance=0.5e-3)

    def fn(p):
        system = with_parameters(template, p[0], p[1])
        tr = simulate_arm(system, t1, H, save_every=1, throw=False)
        error = responses(system, tr)[0]
        return jnp.max(jnp.sqrt(jnp.sum(error**2, axis=1)))

    return fn


def _batch_timing(batch_dir, info):
    """Run time and compile time of the chunks actually computed, accumulated in
    `batch_dir/timing.json` over resumed runs (loaded chunks cost nothing now but were
    computed by an earlier call)."""
    path = batch_dir / "timing.json"
    old = json.loads(path.read_text()) if path.exists() and info.computed else None
    if path.exists() and not info.computed:
        return json.loads(path.read_text())  # everything loaded: the earlier timing stands
    computed = min(len(info.computed) * info.chunk_size, info.n)
    timing = {"samples": computed, "run_s": info.run_s, "compile_s": info.compile_s}
    if old is not None and computed < info.n:  # a resumed run: add what was computed before
        timing = {k: timing[k] + old[k] for k in timing}
    path.write_text(json.dumps(timing))
    return timing


def _figure(t, env, path, n):
    fig, axes = plotting.subplots(3, 2, figsize=(11, 9), sharex=True)
    rows = (
        ("error", "tip error", "m", ("x", "y")),
        ("accel", "tip acceleration", "m/s²", ("x", "y")),
        ("torque", "torque", "N m", ("τ1", "τ2")),
    )
    for r, (key, what, unit, comps) in enumerate(rows):
        for c in range(2):
            ax = axes[r, c]
            lo, hi = env.lower[key][:, c], env.upper[key][:, c]
            ax.fill_between(t, lo, hi, alpha=0.35, label="interval envelope")
            ax.plot(t, hi, lw=0.8)
            ax.plot(t, lo, lw=0.8)
            ax.set_ylabel(f"{what} {comps[c]} [{unit}]")
            ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"seed 002 Fig. 8: c in [0.1, 0.5] mm, E in [20, 30] GPa, {n} samples")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plotting.close(fig)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Sample, simulate, envelope, search; write `fig8_envelopes.png`, `envelopes.npz`.

    **Returns:** `n_samples`; `tip_error_upper_max` and `tip_error_lower_min` (m: the
    largest upper and the smallest lower envelope value over time and both components);
    `torque1_upper_max` (N m); `samples_per_second` (samples / run time of the batch,
    compile excluded; a resumed run counts the chunks computed by each call),
    `batch_compile_time`, `batch_run_time` (s); the peak tip error
    over the search horizon: `peak_error_sampled`, `peak_error_vertex`,
    `peak_error_gradient` (m) with `gradient_argmax_clearance` (m),
    `gradient_argmax_youngs` (Pa), `gradient_evaluations`, `search_horizon` (s);
    `t_end`, `h` (s).
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    n, t1 = (16, 1.0) if quick else (256, DURATION)
    horizon = SEARCH_HORIZON_QUICK if quick else SEARCH_HORIZON
    save_every = round(SAVE_DT / H)
    result = interval_analysis(
        _arm_outputs(t1, save_every),
        BOX,
        n,
        method="lhs",
        seed=0,
        chunk_size=64,
        valid=lambda out: out["ok"],
        out_dir=out_dir / "batch",
        overwrite=True,
        progress=progress,
    )
    out, env, info = result.outputs, result.envelope, result.info
    timing = _batch_timing(out_dir / "batch", info)
    if not np.all(out["ok"]):
        raise RuntimeError(f"clearance_interval: {int(np.sum(~out['ok']))} of {n} samples failed to converge.")
    t = np.asarray(out["t"][0])
    np.savez_compressed(
        out_dir / "envelopes.npz",
        t=t,
        samples=result.samples,
        **{
            f"{k}_{side}": np.asarray(getattr(env, side)[k])
            for k in ("error", "accel", "torque")
            for side in ("lower", "upper")
        },
    )
    _figure(t, env, out_dir / "fig8_envelopes.png", n)

    # the same scalar response three ways: sampled, corners, gradient search
    k = int(round(horizon / (SAVE_DT))) + 1
    sampled = float(np.max(np.linalg.norm(np.asarray(out["error"])[:, :k], axis=2)))
    peak = _peak_error(horizon)
    vertex = vertex_method(peak, BOX)
    steps = SEARCH_STEPS_QUICK if quick else SEARCH_STEPS
    ext = extreme_search(peak, BOX, default_optimizer(steps, SEARCH_RATE), steps=steps, starts=SEARCH_STARTS)
    return {
        "n_samples": n,
        "tip_error_upper_max": float(np.max(env.upper["error"])),
        "tip_error_lower_min": float(np.min(env.lower["error"])),
        "torque1_upper_max": float(np.max(env.upper["torque"][:, 0])),
        "samples_per_second": timing["samples"] / timing["run_s"],
        "batch_compile_time": timing["compile_s"],
        "batch_run_time": timing["run_s"],
        "peak_error_sampled": sampled,
        "peak_error_vertex": float(np.max(vertex.outputs)),
        "peak_error_gradient": ext.max,
        "gradient_argmax_clearance": float(ext.argmax[0]),
        "gradient_argmax_youngs": float(ext.argmax[1]),
        "gradient_evaluations": ext.evaluations,
        "search_horizon": horizon,
        "t_end": t1,
        "h": H,
    }
