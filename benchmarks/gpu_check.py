"""Accelerator check: the batch and gradient benchmarks at short sizes, one table.

Run on the machine to check (it uses JAX's default backend; nothing else changes):

    python benchmarks/gpu_check.py                      # about 5 minutes or less on one GPU
    python benchmarks/gpu_check.py --smoke              # tiny sizes, a CPU smoke test
    python benchmarks/gpu_check.py --json gpu_check.json

It needs only flexjax (no Exudyn) and prints, for the default device:

- batch, stiff ANCF pendulum (the model of `bench_peers.py` (b): 4 planar ANCF elements,
  E = 210 GPa +-10 %, `--batch-steps` steps of 1 ms, modified Newton with one Newton
  matrix per device batch unless `--no-shared-matrix`, turned with the beam unless
  `--no-corotate`) and batch, slider-crank (the model
  of `bench_batch.py`, 100 steps of 1 ms), each for N in `--n`: `run_batch` compile time
  (`BatchInfo.compile_s`), the median of `--repeat` warm runs and samples/s;
- gradient: reverse-mode d(tip x)/dE of the stiff ANCF pendulum over each of
  `--grad-steps` steps of 0.1 ms, against the forward run (compile and median run of
  each), with the peak device memory where the backend reports it
  (`Device.memory_stats()["peak_bytes_in_use"]`; it is a process-wide high-water mark,
  so it only grows from row to row).

The load average (`os.getloadavg()`) is printed with the table; on a shared host the
CPU-side times are noisy.
"""

import argparse
import importlib.util
import json
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache
import pathlib
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import flexjax as fj
from flexjax.batch import run_batch

HERE = pathlib.Path(__file__).resolve().parent


def _load(name):
    """A sibling benchmark script as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _peak_bytes(dev):
    try:
        stats = dev.memory_stats() or {}
    except Exception:  # backends without memory statistics (CPU) raise or return None
        stats = {}
    return stats.get("peak_bytes_in_use")


def batch_rows(name, fn, samples_for, ns, repeat):
    rows = []
    for n in ns:
        samples = samples_for(n)
        out, info = run_batch(fn, samples, chunk_size=n, return_info=True)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            out = run_batch(fn, samples, chunk_size=n)
            times.append(time.perf_counter() - t)
        run_s = statistics.median(times)
        rows.append(
            {
                "model": name,
                "n": n,
                "compile_s": info.compile_s,
                "run_s": run_s,
                "samples_per_s": n / run_s,
                "all_ok": bool(np.all(out["ok"])),
            }
        )
        print(f"  batch {name} N={n}: {n / run_s:.0f} samples/s", file=sys.stderr, flush=True)
    return rows


def grad_rows(peers, steps_list, repeat, dev):
    rows = []
    E = jnp.asarray(peers.STIFF["youngs"])
    for steps in steps_list:
        f = peers.flexjax_tip(peers.STIFF, peers.STIFF_ELEMENTS, steps * 1e-4, 1e-4, 0.9)
        loss = lambda youngs, f=f: f(youngs)[0][0]
        r = {"steps": steps}
        for which, fn in (("forward", loss), ("grad", jax.grad(loss))):
            compiled, r[f"{which}_compile_s"] = peers._aot(fn, E)
            jax.block_until_ready(compiled(E))
            r[f"{which}_run_s"], _ = peers._median_run(lambda compiled=compiled: compiled(E), repeat)
            r[f"{which}_peak_bytes"] = _peak_bytes(dev)
        r["grad_over_forward"] = r["grad_run_s"] / r["forward_run_s"]
        rows.append(r)
        print(f"  gradient {steps} steps: {r['grad_over_forward']:.2f} x forward", file=sys.stderr, flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ints = lambda s: [int(x) for x in s.split(",") if x.strip()]
    p.add_argument("--n", type=ints, default=[64, 1024], help="batch sizes, comma-separated")
    p.add_argument("--batch-steps", type=int, default=100, help="steps per batch sample")
    p.add_argument(
        "--shared-matrix",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ANCF batch: one Newton matrix per device batch (as bench_peers.py (b))",
    )
    p.add_argument(
        "--corotate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ANCF batch: the kept Newton matrix turned with the beam (as bench_peers.py (b))",
    )
    p.add_argument("--grad-steps", type=ints, default=[1000, 10_000], help="gradient horizons, comma-separated")
    p.add_argument("--repeat", type=int, default=3, help="warm runs; the median is reported")
    p.add_argument("--smoke", action="store_true", help="tiny sizes: N = 8, 20 steps, gradient over 200 steps")
    p.add_argument("--json", metavar="FILE", help="write all rows as JSON")
    a = p.parse_args(argv)
    if a.smoke:
        a.n, a.batch_steps, a.grad_steps, a.repeat = [8], 20, [200], 1

    t_start = time.perf_counter()
    load = os.getloadavg()
    dev = jax.devices()[0]
    device = f"{dev.platform}:{dev.device_kind}"
    peers, batch = _load("bench_peers"), _load("bench_batch")

    ancf = peers.batch_fn(
        argparse.Namespace(
            batch_steps=a.batch_steps,
            batch_dt=1e-3,
            rho_inf=0.9,
            newton="modified",
            shared_matrix=a.shared_matrix,
            corotate=a.corotate,
        )
    )
    crank, box = batch.build("slider_crank", 100, 1e-3)
    rows = batch_rows("ANCF pendulum", ancf, lambda n: peers._samples(n, 0), a.n, a.repeat)
    rows += batch_rows("slider-crank", crank, lambda n: box.sample(n, "lhs", seed=0), a.n, a.repeat)
    grads = grad_rows(peers, a.grad_steps, a.repeat, dev)
    total = time.perf_counter() - t_start

    print(
        f"\nflexjax {fj.__version__}, jax {jax.__version__}, {len(jax.devices())} x {device}, float64, "
        f"generalized-alpha rho_inf=0.9; median of {a.repeat} warm runs; load average {load[0]:.1f} "
        f"({os.cpu_count()} CPU cores); total {total:.0f} s\n"
    )
    print(
        peers._table(
            rows,
            [
                ("batch model", lambda r: r["model"]),
                ("N", lambda r: str(r["n"])),
                ("compile (s)", lambda r: f"{r['compile_s']:.2f}"),
                ("run (s)", lambda r: f"{r['run_s']:.4f}"),
                ("samples/s", lambda r: f"{r['samples_per_s']:.0f}"),
                ("all ok", lambda r: "yes" if r["all_ok"] else "NO"),
            ],
        )
    )
    mib = lambda b: "-" if b is None else f"{b / 2**20:.0f}"
    print()
    print(
        peers._table(
            grads,
            [
                ("gradient steps", lambda r: str(r["steps"])),
                ("fwd compile (s)", lambda r: f"{r['forward_compile_s']:.2f}"),
                ("fwd run (s)", lambda r: f"{r['forward_run_s']:.4f}"),
                ("grad compile (s)", lambda r: f"{r['grad_compile_s']:.2f}"),
                ("grad run (s)", lambda r: f"{r['grad_run_s']:.4f}"),
                ("grad/fwd", lambda r: f"{r['grad_over_forward']:.2f}"),
                ("peak MiB", lambda r: mib(r["grad_peak_bytes"])),
            ],
        )
    )
    if a.json:
        meta = {
            "flexjax_version": fj.__version__,
            "jax_version": jax.__version__,
            "device": device,
            "devices": len(jax.devices()),
            "cpu_count": os.cpu_count(),
            "load_avg_1min": load[0],
            "total_s": total,
            "batch_steps": a.batch_steps,
            "repeat": a.repeat,
        }
        with open(a.json, "w") as f:
            json.dump({**meta, "batch": rows, "gradient": grads}, f, indent=2)
        print(f"\nwrote {a.json}")


if __name__ == "__main__":
    main()
