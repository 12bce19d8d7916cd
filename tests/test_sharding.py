"""`run_batch` sharded over 2 CPU devices equals the unsharded run, and the
`jax.distributed` example runs as a single process.

`--xla_force_host_platform_device_count` is read when JAX's CPU client starts, so the
2-device part runs in a fresh interpreter with `XLA_FLAGS` set in its environment. One
subprocess does both checks: it runs `benchmarks/distributed_example.py` as process 0 of 1
(`jax.distributed.initialize` with a local coordinator), whose `run_batch` shards over the
2 local devices, then reruns the same samples on one device. Per-device batches stay at 2
samples for that comparison. A second batch runs 32 samples per device: with jaxlib
0.10.2, batched LAPACK kernels deadlock there when the forced host devices occupy every
core (docs/batch.md), which `flexjax.solvers._dense` avoids.
"""

import importlib.util
import os
import pathlib
import socket
import subprocess
import sys
import textwrap

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]

_SCRIPT = textwrap.dedent(
    """
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1] + "/benchmarks")
    import distributed_example as de
    a = de.parse_args(["--coordinator", sys.argv[3], "--num-processes", "1", "--process-id", "0",
                       "--n", "8", "--chunk-size", "4", "--out-dir", sys.argv[2]])
    part, info = de.run(a)
    import jax
    from flexjax.batch import run_batch
    one = run_batch(de.pendulum_run, de.samples(8, 0), chunk_size=4, devices=jax.local_devices()[:1])
    # 32 samples per device of a 4-element steel ANCF pendulum (22 x 22 Newton matrices,
    # modified Newton): jaxlib 0.10.2's batched LAPACK inverse hangs here (docs/batch.md)
    import jax.numpy as jnp
    import flexjax as fj
    from flexjax.joints.ancf import AncfPin

    def beam_run(youngs):
        beam = fj.AncfBeam2D(1.0, 7850.0, 1e-4, 1e-8 / 12, youngs, 4)
        system = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -9.81))])
        q0 = beam.straight_coordinates()
        tr = fj.simulate(system, q0, jnp.zeros_like(q0), 0.02, 1e-3, save_every=20, consistent=False,
                         throw=False, solver=fj.GeneralizedAlpha(newton="modified"))
        return {"tip": beam.node_position(tr.q[-1], -1), "ok": tr.succeeded}

    youngs = 210e9 * np.linspace(0.9, 1.1, 64)
    big_sharded = run_batch(beam_run, youngs, chunk_size=64)
    big_loop = np.stack([np.asarray(jax.jit(beam_run)(e)["tip"]) for e in youngs[:4]])
    np.savez(sys.argv[2] + "/unsharded.npz", ndevices=info.ndevices, nlocal=len(jax.local_devices()),
             nprocesses=jax.process_count(), big_sharded=big_sharded["tip"], big_loop=big_loop,
             big_ok=big_sharded["ok"], **one)
    jax.distributed.shutdown()
    """
)


def _example():
    """`benchmarks/distributed_example.py` as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("distributed_example", REPO / "benchmarks/distributed_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_host_devices_and_single_process_distributed_equal_unsharded(tmp_path):
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    cmd = [sys.executable, "-c", _SCRIPT, str(REPO), str(tmp_path), f"localhost:{_free_port()}"]
    proc = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]

    ref = np.load(tmp_path / "unsharded.npz")
    assert (int(ref["nlocal"]), int(ref["ndevices"]), int(ref["nprocesses"])) == (2, 2, 1)
    part = np.load(tmp_path / "part_000.npz")
    np.testing.assert_array_equal(part["index"], np.arange(8))
    assert part["tip_x"].shape == (8, 11) and part["ok"].all() and ref["ok"].all()
    # sharded (2 devices, 2 samples each) against one device (4 per chunk): same numbers
    np.testing.assert_allclose(part["tip_x"], ref["tip_x"], rtol=0, atol=1e-13)
    # 32 samples per device on 2 devices of a 2-core machine: finishes, and equals
    # unbatched runs (LAPACK) to the Newton tolerance (a batch shares matrix refreshes)
    assert ref["big_sharded"].shape == (64, 2) and ref["big_ok"].all()
    np.testing.assert_allclose(ref["big_sharded"][:4], ref["big_loop"], rtol=0, atol=1e-9)
    assert np.ptp(ref["big_sharded"][:, 1]) > 1e-9  # the samples differ by more than that
    assert sorted(p.name for p in (tmp_path / "process_000").iterdir()) == [
        "chunk_00000.npz",
        "chunk_00001.npz",
        "manifest.json",
    ]

    # gathering the parts of a finished run restores sample order
    de = _example()
    merged = de.gather(tmp_path)
    np.testing.assert_array_equal(merged["tip_x"], part["tip_x"])
    np.testing.assert_array_equal(merged["samples"], de.samples(8, 0))


def test_distributed_example_splits_samples_without_overlap():
    de = _example()
    parts = [de.share(10, 3, p) for p in range(3)]
    assert [len(p) for p in parts] == [4, 3, 3]
    np.testing.assert_array_equal(np.concatenate(parts), np.arange(10))
    s = de.samples(16, 0)
    assert s.shape == (16, 2) and np.all(s >= de.LOWER) and np.all(s <= de.UPPER)
    np.testing.assert_array_equal(s, de.samples(16, 0))
