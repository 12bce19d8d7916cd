"""Multi-host sample run with `jax.distributed`: each process runs its share of a sample
set through `flexjax.run_batch` on its local devices and writes its part to disk.

One process per host (or per GPU group), all started with the same `--n`, `--seed` and
`--out-dir` on a shared file system (see docs/distributed.md):

    # host 0 (also runs the coordinator)             # host 1
    python benchmarks/distributed_example.py \\        python benchmarks/distributed_example.py \\
        --coordinator 10.0.0.1:12345 \\                   --coordinator 10.0.0.1:12345 \\
        --num-processes 2 --process-id 0 \\               --num-processes 2 --process-id 1 \\
        --n 4096 --out-dir runs/sweep                     --n 4096 --out-dir runs/sweep

    # afterwards, on any machine that sees out-dir:
    python benchmarks/distributed_example.py --gather --out-dir runs/sweep

Single process (what the tests run): `--num-processes 1 --process-id 0
--coordinator localhost:PORT`. The three settings also come from the environment
variables `JAX_COORDINATOR_ADDRESS`, `JAX_NUM_PROCESSES` and `JAX_PROCESS_ID`;
with none given, `jax.distributed.initialize()` auto-detects Slurm, Open MPI or TPU.

The model is the rigid pendulum of `flexjax.models` with sampled length (0.5-1.5 m) and
release angle (0.2-1.2 rad), 100 steps of 5 ms; the output is the tip x at every
saved instant and the success flag. Samples are a fixed-seed Latin hypercube, generated
identically by every process; process p takes the p-th of `num_processes` contiguous
slices. Each process's `run_batch` writes its chunks to `out-dir/process_<p>/`, so a
restarted process resumes where it stopped; when it is done it writes
`out-dir/part_<p>.npz` (its sample indices, samples and outputs). No data travels between
processes: `--gather` concatenates the parts afterwards into `out-dir/all.npz`.
"""

import argparse
import os
import pathlib
import sys
import time

import numpy as np

T1, DT, SAVE_EVERY = 0.5, 5e-3, 10
LOWER, UPPER = np.array([0.5, 0.2]), np.array([1.5, 1.2])  # length (m), angle (rad)


def samples(n: int, seed: int) -> np.ndarray:
    """`(n, 2)` Latin hypercube samples of (length, angle)."""
    rng = np.random.default_rng(seed)
    u = (np.stack([rng.permutation(n) for _ in range(2)], axis=1) + rng.random((n, 2))) / n
    return LOWER + u * (UPPER - LOWER)


def pendulum_run(p):
    """One sample: `p = (length, angle)` -> tip x at every saved instant and success."""
    import flexjax as fj
    from flexjax import models

    q0, v0 = models.pendulum_state(p[1], p[0])
    tr = fj.simulate(models.pendulum(length=p[0]), q0, v0, T1, DT, save_every=SAVE_EVERY, consistent=False, throw=False)
    return {"tip_x": tr.q[:, 2], "ok": tr.succeeded}


def share(n: int, num_processes: int, process_id: int) -> np.ndarray:
    """Indices of the samples that process `process_id` runs (contiguous slices)."""
    return np.array_split(np.arange(n), num_processes)[process_id]


def run(a):
    """Initialize `jax.distributed`, run this process's share and write its part.

    **Returns:** `(path of the part file, BatchInfo or None when the share is empty)`.
    The caller shuts the distributed runtime down (`jax.distributed.shutdown()`).
    """
    import jax

    kwargs = {
        k: v
        for k, v in (
            ("coordinator_address", a.coordinator),
            ("num_processes", a.num_processes),
            ("process_id", a.process_id),
        )
        if v is not None
    }
    jax.distributed.initialize(**kwargs)  # before any other JAX call
    from flexjax.batch import run_batch

    pid, nproc = jax.process_index(), jax.process_count()
    idx = share(a.n, nproc, pid)
    out_dir = pathlib.Path(a.out_dir)
    print(
        f"process {pid}/{nproc}: {len(jax.local_devices())} local of {len(jax.devices())} devices, "
        f"samples {idx[0] if idx.size else '-'}..{idx[-1] if idx.size else '-'} ({idx.size})",
        flush=True,
    )
    part = out_dir / f"part_{pid:03d}.npz"
    info = None
    if idx.size:
        p = samples(a.n, a.seed)[idx]
        t = time.perf_counter()
        # local devices only: each process shards its own chunks, no cross-host traffic
        out, info = run_batch(
            pendulum_run,
            p,
            chunk_size=a.chunk_size,
            out_dir=out_dir / f"process_{pid:03d}",
            devices=jax.local_devices(),
            return_info=True,
        )
        print(
            f"process {pid}: {idx.size} samples in {time.perf_counter() - t:.2f} s "
            f"(compile {info.compile_s:.2f} s, {info.nchunks} chunks of {info.chunk_size})",
            flush=True,
        )
        tmp = part.with_name(part.stem + ".tmp.npz")
        np.savez(tmp, index=idx, samples=p, num_processes=nproc, n=a.n, **out)
        os.replace(tmp, part)
    return part, info


def gather(out_dir) -> dict:
    """Concatenate the `part_*.npz` of `out_dir` in sample order; writes `all.npz`."""
    out_dir = pathlib.Path(out_dir)
    parts = [dict(np.load(f)) for f in sorted(out_dir.glob("part_*.npz"))]
    if not parts:
        raise SystemExit(f"gather: no part_*.npz in {out_dir}")
    n, nproc = int(parts[0]["n"]), int(parts[0]["num_processes"])
    index = np.concatenate([p["index"] for p in parts])
    if len(parts) != nproc or not np.array_equal(np.sort(index), np.arange(n)):
        raise SystemExit(
            f"gather: found {len(parts)} of {nproc} parts covering {index.size} of {n} samples; "
            "a process has not finished"
        )
    order = np.argsort(index)
    keys = [k for k in parts[0] if k not in ("index", "num_processes", "n")]
    merged = {k: np.concatenate([p[k] for p in parts])[order] for k in keys}
    np.savez(out_dir / "all.npz", **merged)
    return merged


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    env_int = lambda k: int(os.environ[k]) if k in os.environ else None
    p.add_argument(
        "--coordinator",
        default=os.environ.get("JAX_COORDINATOR_ADDRESS"),
        help="host:port of process 0's coordinator (env JAX_COORDINATOR_ADDRESS)",
    )
    p.add_argument("--num-processes", type=int, default=env_int("JAX_NUM_PROCESSES"), help="env JAX_NUM_PROCESSES")
    p.add_argument("--process-id", type=int, default=env_int("JAX_PROCESS_ID"), help="env JAX_PROCESS_ID")
    p.add_argument("--n", type=int, default=1024, help="total number of samples (all processes)")
    p.add_argument("--chunk-size", type=int, default=256, help="samples per compiled call on one process")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", required=True, help="shared directory for chunks and parts")
    p.add_argument("--gather", action="store_true", help="only merge the parts of --out-dir into all.npz")
    a = p.parse_args(argv)
    if not a.gather and (a.n < 1 or a.chunk_size < 1):
        p.error("--n and --chunk-size must be >= 1")
    return a


def main(argv=None):
    a = parse_args(argv)
    if a.gather:
        merged = gather(a.out_dir)
        print(
            f"gathered {len(merged['ok'])} samples ({int(np.sum(merged['ok']))} succeeded) "
            f"into {pathlib.Path(a.out_dir) / 'all.npz'}"
        )
        return
    import jax

    part, _ = run(a)
    jax.distributed.shutdown()
    print(f"wrote {part}", file=sys.stderr)


if __name__ == "__main__":
    main()
