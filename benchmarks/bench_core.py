"""Core speed benchmark: generalized-alpha on the classic rigid models, and one gradient.

Run standalone (see benchmarks/README.md):

    python benchmarks/bench_core.py                 # 5000 steps, 5 repeats
    python benchmarks/bench_core.py --steps 2000 --repeat 3 --json out.json

For the rigid double pendulum and the slider-crank, integrated with
`GeneralizedAlpha(rho_inf=0.9)` at dt = 1e-3, it prints:

- compile time, measured two ways:
  * "first call": wall time of the first `flexjax.simulate(...)` call minus the median
    warm run. This is what a user waits for: besides the jitted step loop it includes
    compiling `System.consistent_state` and `_diagnostics`, and `solver.init`, which runs
    op by op (each primitive is compiled on its first use).
  * "AOT chunk": `_run_chunk.lower(*args).compile()` for the jitted loop
    (`flexjax.solvers.simulate._run_chunk`, an `eqx.filter_jit` function) alone, with the
    arguments that `simulate` passes it (tracing + lowering + XLA compile).
  Each compile is timed in its own fresh interpreter (the script reruns itself with the
  internal `--worker` option), so no number reuses traces or executables of another.
- run time: median of `--repeat` warm `simulate` calls, each ended by
  `jax.block_until_ready`; steps/s = steps / that median. The "scan only" column is the
  median run of the AOT-compiled loop alone (no Python-side setup, no diagnostics).
- max constraint residual max_t |Phi(q, t)| of the trajectory, device and dtype.

Then the gradient of the final slider x position (`q[-1, 8]`) with respect to the crank
speed `omega` (the system is built inside the function, `models.slider_crank(omega=w)`),
compiled (`jax.jit(f).lower(w).compile()`) and run separately, against the same function's
forward pass; the value is checked against the closed-form slider position. The default
`--omega 5` avoids omega = 2*pi, where 5000 steps end after a whole number of crank turns
and the exact derivative is 0.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache

import equinox as eqx
import jax
import jax.numpy as jnp

import flexjax
from flexjax import models
from flexjax.solvers.simulate import _run_chunk

DT = 1e-3


def _timed(fn):
    t = time.perf_counter()
    out = jax.block_until_ready(fn())
    return time.perf_counter() - t, out


def _repeat(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        dt, out = _timed(fn)
        times.append(dt)
    return times, out


def _chunk_args(system, solver, q0, v0, steps):
    """The arguments of the step loop `_run_chunk` (save_every=1, one chunk, checkpointed, no outputs)."""
    q0, v0 = jnp.asarray(q0, float), jnp.asarray(v0, float)
    q0, v0 = system.consistent_state(q0, v0, 0.0)
    t0a, h = jnp.asarray(0.0, float), jnp.asarray(DT, float)
    # jitted rather than eager: op-by-op dispatch would spend seconds compiling primitives
    state = eqx.filter_jit(lambda s, t, q, v: solver.init(s, t, q, v))(system, t0a, q0, v0)
    fail = (jnp.array(-1), jnp.array(jnp.nan), jnp.array(0.0))
    return (system, solver, state, fail, t0a, h, jnp.array(0), steps, 1, True, None)


MODELS = {
    "double_pendulum": lambda: (models.double_pendulum(), *models.double_pendulum_state(0.5, 1.0)),
    "slider_crank": lambda: (models.slider_crank(), *models.slider_crank_state()),
}


def bench_simulate(name, steps, repeat):
    """First (cold) `simulate` call, then `repeat` warm ones."""
    system, q0, v0 = MODELS[name]()
    solver = flexjax.GeneralizedAlpha(rho_inf=0.9)

    def run():
        return flexjax.simulate(system, q0, v0, steps * DT, DT, solver=solver)

    first, _ = _timed(run)
    times, traj = _repeat(run, repeat)
    run_s = statistics.median(times)
    return {
        "nq": system.nq,
        "nconstraints": system.nconstraints,
        "compile_first_call_s": first - run_s,
        "first_call_s": first,
        "run_median_s": run_s,
        "run_min_s": min(times),
        "steps_per_s": steps / run_s,
        "max_constraint_residual": float(jnp.max(traj.constraint_residual)),
        "max_velocity_residual": float(jnp.max(traj.velocity_residual)),
        "max_newton_iterations": int(jnp.max(traj.newton_iterations)),
        "dtype": str(traj.q.dtype),
    }


def bench_aot(name, steps, repeat):
    """`_run_chunk.lower(*args).compile()` on cold caches, then `repeat` runs of it."""
    system, q0, v0 = MODELS[name]()
    args = _chunk_args(system, flexjax.GeneralizedAlpha(rho_inf=0.9), q0, v0, steps)
    t = time.perf_counter()
    lowered = _run_chunk.lower(*args)
    lower_s = time.perf_counter() - t
    t = time.perf_counter()
    compiled = lowered.compile()
    xla_s = time.perf_counter() - t
    times, _ = _repeat(lambda: compiled(*args), repeat)
    return {
        "compile_aot_chunk_s": lower_s + xla_s,
        "aot_lower_s": lower_s,
        "aot_xla_compile_s": xla_s,
        "scan_only_median_s": statistics.median(times),
        "scan_only_steps_per_s": steps / statistics.median(times),
    }


def bench_gradient(which, steps, repeat, omega):
    """`which` = "forward" or "grad" of the final slider x w.r.t. the crank speed."""
    solver = flexjax.GeneralizedAlpha(rho_inf=0.9)
    t1 = steps * DT

    def final_slider_x(w):
        system = models.slider_crank(omega=w)
        q0, v0 = models.slider_crank_state(omega=w)
        traj = flexjax.simulate(system, q0, v0, t1, DT, solver=solver, throw=False)
        return traj.q[-1, 8]  # body 2 (slider) x

    fn = final_slider_x if which == "forward" else jax.grad(final_slider_x)
    w = jnp.asarray(omega, float)
    t = time.perf_counter()
    compiled = jax.jit(fn).lower(w).compile()
    compile_s = time.perf_counter() - t
    times, val = _repeat(lambda: compiled(w), repeat)
    exact = (jax.grad if which == "grad" else lambda f: f)(lambda w: models.slider_position_exact(w * t1))(w)
    return {
        f"{which}_compile_s": compile_s,
        f"{which}_run_median_s": statistics.median(times),
        f"{which}_value": float(val),
        f"{which}_exact": float(exact),
    }


def _worker(task, name, a):
    if task == "simulate":
        return bench_simulate(name, a.steps, a.repeat)
    if task == "aot":
        return bench_aot(name, a.steps, a.repeat)
    return bench_gradient(task, a.steps, a.repeat, a.omega)


def _isolated(task, name, a):
    """Run one measurement in a fresh interpreter, so that its compile is cold."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", task, name]
    cmd += ["--steps", str(a.steps), "--repeat", str(a.repeat), "--omega", repr(a.omega)]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _table(rows, cols):
    cells = [[h for h, _ in cols]] + [[f(r) for _, f in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False)))
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5000, help="time steps per run (dt = 1e-3)")
    p.add_argument("--repeat", type=int, default=5, help="warm runs; the median is reported")
    p.add_argument("--omega", type=float, default=5.0, help="crank speed (rad/s) for the gradient")
    p.add_argument("--json", metavar="FILE", help="write all numbers as one flat JSON object")
    p.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)  # internal: TASK MODEL
    a = p.parse_args()
    if a.steps < 1 or a.repeat < 1:
        p.error("--steps and --repeat must be >= 1")
    if a.worker:
        print(json.dumps(_worker(*a.worker, a)))
        return

    dev = jax.devices()[0]
    device = f"{dev.platform}:{dev.device_kind}"
    rows = []
    for name in MODELS:
        r = {"model": name}
        r.update(_isolated("simulate", name, a))
        r.update(_isolated("aot", name, a))
        rows.append(r)
    g = {"omega": a.omega}
    g.update(_isolated("forward", "slider_crank", a))
    g.update(_isolated("grad", "slider_crank", a))
    g["grad_over_forward"] = g["grad_run_median_s"] / g["forward_run_median_s"]
    g["grad_rel_error"] = abs(g["grad_value"] - g["grad_exact"]) / abs(g["grad_exact"])

    print(
        f"flexjax {flexjax.__version__}, jax {jax.__version__}, device {device}, "
        f"{os.cpu_count()} CPU cores; generalized-alpha rho_inf=0.9, dt={DT:g}, "
        f"{a.steps} steps, median of {a.repeat} runs; each compile timed in a fresh process\n"
    )
    print(
        _table(
            rows,
            [
                ("model", lambda r: r["model"]),
                ("nq", lambda r: str(r["nq"])),
                ("m", lambda r: str(r["nconstraints"])),
                ("compile 1st call (s)", lambda r: f"{r['compile_first_call_s']:.2f}"),
                ("compile AOT chunk (s)", lambda r: f"{r['compile_aot_chunk_s']:.2f}"),
                ("run (s)", lambda r: f"{r['run_median_s']:.3f}"),
                ("steps/s", lambda r: f"{r['steps_per_s']:.0f}"),
                ("scan only (s)", lambda r: f"{r['scan_only_median_s']:.3f}"),
                ("max |Phi|", lambda r: f"{r['max_constraint_residual']:.1e}"),
                ("device", lambda r: device),
                ("dtype", lambda r: r["dtype"]),
            ],
        )
    )
    print(
        f"\ngradient d q[-1, 8] / d omega (slider-crank, omega={a.omega:g} rad/s, {a.steps} steps):\n"
        f"  value {g['grad_value']:.9g} (closed form {g['grad_exact']:.9g}, rel. error {g['grad_rel_error']:.1e})\n"
        f"  forward: compile {g['forward_compile_s']:.2f} s, run {g['forward_run_median_s']:.3f} s\n"
        f"  grad:    compile {g['grad_compile_s']:.2f} s, run {g['grad_run_median_s']:.3f} s\n"
        f"  gradient time / forward time = {g['grad_over_forward']:.2f}"
    )

    if a.json:
        flat = {
            "flexjax_version": flexjax.__version__,
            "jax_version": jax.__version__,
            "device": device,
            "cpu_count": os.cpu_count(),
            "machine": platform.machine(),
            "steps": a.steps,
            "repeat": a.repeat,
            "dt": DT,
            "rho_inf": 0.9,
        }
        for r in rows:
            flat.update({f"{r['model']}_{k}": v for k, v in r.items() if k != "model"})
        flat.update({f"gradient_{k}": v for k, v in g.items()})
        with open(a.json, "w") as f:
            json.dump(flat, f, indent=2)
        print(f"\nwrote {a.json}")


if __name__ == "__main__":
    main()
