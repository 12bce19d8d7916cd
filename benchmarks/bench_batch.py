"""Batch benchmark: N parameter samples of a flexjax model as one vmapped batch
(`flexjax.batch.run_batch`) against the same samples simulated one at a time.

Run standalone (see benchmarks/README.md):

    python benchmarks/bench_batch.py                          # slider-crank, N = 1, 64, 256, 1024
    python benchmarks/bench_batch.py --model double_pendulum --n 1,64 --steps 200
    python benchmarks/bench_batch.py --model clearance_arm --n 1,64,256,1024 --steps 400 --dt 5e-4 --repeat 1
    python benchmarks/bench_batch.py --host-devices 2 --json bench_batch.json

Models (`--model`), generalized-alpha (rho_inf = 0.9), `--steps` steps of `--dt`:

- `slider_crank`: crank speed omega sampled in [pi, 3 pi] rad/s (Latin hypercube);
  output: slider x at every step and the success flag.
- `double_pendulum`: masses m1, m2 sampled in [0.5, 2] kg, released from (0.5, 1.0) rad;
  output: all coordinates at every step and the success flag.
- `clearance_arm`: the two-link ANCF arm with a clearance elbow of
  `flexjax.models.clearance_arm` (seed 002), clearance c in [0.1, 0.5] mm and E in
  [20, 30] GPa, generalized-alpha rho_inf = 0.8 (the experiment's setting); a short
  horizon of the 10 s run (e.g. `--steps 400 --dt 5e-4`: the first 0.2 s, which holds
  the first impacts); output: the tip error at every step and the success flag.

For each N:

- batch: `run_batch(fn, samples, chunk_size=min(N, --chunk-size))`. Its compile time
  (`BatchInfo.compile_s`: trace + lower + XLA compile of `vmap(fn)` for one chunk) is
  reported apart; the run time is the median of `--repeat` warm calls (compiled
  function cached), and includes the transfer of the outputs to host memory.
- loop: `jax.jit(fn)` compiled once (`.lower(sample).compile()`, reported apart), then
  called on each sample in a Python loop, each output pulled to the host
  (`np.asarray`) before the next call, as a user collecting results would do; timed
  once (it is the slow side).
- max |batch - loop|: largest difference of the outputs (they should agree to round-off).

`--host-devices K` sets `XLA_FLAGS=--xla_force_host_platform_device_count=K` before JAX
starts, to shard the batch over K CPU "devices" (all three models solve with
generalized-alpha, whose batched solves stay off jaxlib's batched LAPACK kernels on a
split CPU, so K may equal the core count; docs/batch.md).
"""

import argparse
import json
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache
import platform
import statistics
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("slider_crank", "double_pendulum", "clearance_arm"), default="slider_crank")
    p.add_argument("--n", default="1,64,256,1024", help="comma-separated sample counts")
    p.add_argument("--steps", type=int, default=100, help="time steps per simulation (default 100)")
    p.add_argument("--dt", type=float, default=1e-3, help="time step (s)")
    p.add_argument("--chunk-size", type=int, default=1024, help="largest chunk (samples per compiled call)")
    p.add_argument("--repeat", type=int, default=3, help="warm batch runs; the median is reported")
    p.add_argument("--host-devices", type=int, default=None, help="force K host (CPU) devices")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--newton",
        choices=("full", "modified"),
        default="full",
        help="GeneralizedAlpha(newton=...) for the rigid models (the clearance arm keeps its own solver)",
    )
    p.add_argument("--json", metavar="FILE", help="write all numbers as JSON")
    a = p.parse_args(argv)
    a.n = [int(x) for x in a.n.split(",") if x.strip()]
    if not a.n or min(a.n) < 1 or a.steps < 1 or a.repeat < 1 or a.chunk_size < 1:
        p.error("--n entries, --steps, --repeat and --chunk-size must be >= 1")
    return a


def build(model, steps, dt, newton="full"):
    """`(fn, box)`: fn(p) simulates one sample; box the sampled parameter range."""
    import jax.numpy as jnp

    import flexjax
    from flexjax import models
    from flexjax.analysis.interval import Interval

    solver = flexjax.GeneralizedAlpha(rho_inf=0.9, newton=newton)
    t1 = steps * dt
    if model == "slider_crank":

        def fn(p):
            w = p[0]
            q0, v0 = models.slider_crank_state(omega=w)
            tr = flexjax.simulate(
                models.slider_crank(omega=w), q0, v0, t1, dt, solver=solver, consistent=False, throw=False
            )
            return {"slider_x": tr.q[:, 8], "ok": tr.succeeded}

        return fn, Interval([jnp.pi], [3 * jnp.pi], names=("omega",))

    if model == "clearance_arm":
        from flexjax.models.clearance_arm import clearance_arm, responses, simulate_arm, with_parameters

        template = clearance_arm(clearance=0.5e-3)

        def fn(p):
            system = with_parameters(template, p[0], p[1])
            tr = simulate_arm(system, t1, dt, save_every=1, throw=False)
            return {"tip_error": responses(system, tr)[0], "ok": tr.succeeded}

        return fn, Interval([0.1e-3, 20e9], [0.5e-3, 30e9], names=("clearance", "youngs"))

    def fn(p):
        q0, v0 = models.double_pendulum_state(0.5, 1.0)
        tr = flexjax.simulate(
            models.double_pendulum(masses=(p[0], p[1])), q0, v0, t1, dt, solver=solver, consistent=False, throw=False
        )
        return {"q": tr.q, "ok": tr.succeeded}

    return fn, Interval([0.5, 0.5], [2.0, 2.0], names=("m1", "m2"))


def rho_inf(model):
    """Spectral radius used for `model` (the clearance arm runs as in its experiment)."""
    return 0.8 if model == "clearance_arm" else 0.9


def bench(a):
    import jax
    import numpy as np

    from flexjax.batch import run_batch

    fn, box = build(a.model, a.steps, a.dt, a.newton)
    single = jax.jit(fn)
    rows = []
    loop_compiled = None
    for n in a.n:
        samples = box.sample(n, "lhs", seed=a.seed)
        chunk = min(n, a.chunk_size)
        out, info = run_batch(fn, samples, chunk_size=chunk, return_info=True)
        times = []
        for _ in range(a.repeat):
            t = time.perf_counter()
            out, _ = run_batch(fn, samples, chunk_size=chunk, return_info=True)
            times.append(time.perf_counter() - t)
        batch_s = statistics.median(times)

        if loop_compiled is None:
            t = time.perf_counter()
            loop_compiled = single.lower(samples[0]).compile()
            loop_compile_s = time.perf_counter() - t
            jax.block_until_ready(loop_compiled(samples[0]))  # first execution allocates; not timed
        t = time.perf_counter()
        loop = [jax.tree_util.tree_map(np.asarray, loop_compiled(p)) for p in samples]
        loop_s = time.perf_counter() - t

        diff = max(
            float(np.max(np.abs(np.asarray(b, float) - np.stack([np.asarray(l, float) for l in ls]))))
            for b, ls in zip(
                jax.tree_util.tree_leaves(out),
                zip(*[jax.tree_util.tree_leaves(o) for o in loop], strict=False),
                strict=False,
            )
        )
        rows.append(
            {
                "n": n,
                "chunk": info.chunk_size,
                "nchunks": info.nchunks,
                "devices": info.ndevices,
                "batch_compile_s": info.compile_s,
                "batch_run_s": batch_s,
                "batch_run_min_s": min(times),
                "batch_samples_per_s": n / batch_s,
                "loop_compile_s": loop_compile_s if n == a.n[0] else 0.0,
                "loop_run_s": loop_s,
                "loop_samples_per_s": n / loop_s,
                "speedup": loop_s / batch_s,
                "max_abs_diff": diff,
                "all_succeeded": bool(np.all(out["ok"])),
            }
        )
        print(f"  N={n}: batch {n / batch_s:.1f} samples/s, loop {n / loop_s:.1f} samples/s", file=sys.stderr)
    return rows


def _table(rows, cols):
    cells = [[h for h, _ in cols]] + [[f(r) for _, f in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv=None):
    a = parse_args(argv)
    if a.host_devices:
        # must precede the first JAX import: the flag is read when the CPU client starts
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={a.host_devices}"
        ).strip()
    import jax

    import flexjax

    rows = bench(a)
    dev = jax.local_devices()
    device = f"{dev[0].platform}:{dev[0].device_kind}"
    print(
        f"flexjax {flexjax.__version__}, jax {jax.__version__}, {len(dev)} x {device}, "
        f"{os.cpu_count()} CPU cores, float64; model {a.model}, "
        f"generalized-alpha rho_inf={rho_inf(a.model)} ({a.newton} Newton), "
        f"{a.steps} steps of dt={a.dt:g}; batch run = median of {a.repeat} warm runs\n"
    )
    print(
        _table(
            rows,
            [
                ("N", lambda r: str(r["n"])),
                ("chunk", lambda r: str(r["chunk"])),
                ("dev", lambda r: str(r["devices"])),
                ("batch compile (s)", lambda r: f"{r['batch_compile_s']:.2f}"),
                ("batch run (s)", lambda r: f"{r['batch_run_s']:.4f}"),
                ("batch samples/s", lambda r: f"{r['batch_samples_per_s']:.1f}"),
                ("loop compile (s)", lambda r: f"{r['loop_compile_s']:.2f}" if r["loop_compile_s"] else "-"),
                ("loop run (s)", lambda r: f"{r['loop_run_s']:.4f}"),
                ("loop samples/s", lambda r: f"{r['loop_samples_per_s']:.1f}"),
                ("speedup", lambda r: f"{r['speedup']:.1f}x"),
                ("max |batch-loop|", lambda r: f"{r['max_abs_diff']:.1e}"),
                ("all ok", lambda r: "yes" if r["all_succeeded"] else "NO"),
            ],
        )
    )
    if a.json:
        meta = {
            "flexjax_version": flexjax.__version__,
            "jax_version": jax.__version__,
            "device": device,
            "devices": len(dev),
            "cpu_count": os.cpu_count(),
            "machine": platform.machine(),
            "model": a.model,
            "steps": a.steps,
            "dt": a.dt,
            "repeat": a.repeat,
            "rho_inf": rho_inf(a.model),
            "newton": a.newton,
            "chunk_size": a.chunk_size,
            "dtype": "float64",
        }
        with open(a.json, "w") as f:
            json.dump({**meta, "rows": rows}, f, indent=2)
        print(f"\nwrote {a.json}")


if __name__ == "__main__":
    main()
