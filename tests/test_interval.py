"""Batched sample runs (`flexjax.batch.run_batch`) and interval analysis
(`flexjax.analysis.interval`): batches equal Python loops, padding and sharding change
nothing, interrupted runs resume, envelopes and extremes match closed forms."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models
from flexjax.analysis import interval as iv
from flexjax.batch import fingerprint, run_batch, similarity_order

REPO = pathlib.Path(__file__).resolve().parents[1]


def pendulum_run(p):
    """Bar pendulum of length p[0] released from p[1] rad, 0.2 s at h = 10 ms."""
    length, theta0 = p[0], p[1]
    q0, v0 = models.pendulum_state(theta0, length)
    tr = fj.simulate(models.pendulum(length=length), q0, v0, 0.2, 1e-2, consistent=False, throw=False)
    return {"tip_x": tr.q[:, 2], "ok": tr.succeeded}


P = np.stack([np.linspace(0.5, 1.5, 7), np.linspace(0.1, 1.0, 7)[::-1]], axis=1)  # N = 7


@pytest.fixture(scope="module")
def loop_reference():
    single = jax.jit(pendulum_run)
    outs = [single(jnp.asarray(p)) for p in P]
    return {k: np.stack([np.asarray(o[k]) for o in outs]) for k in outs[0]}


def test_batch_equals_python_loop_and_padding_changes_nothing(loop_reference):
    chunked, info = run_batch(pendulum_run, P, chunk_size=3, return_info=True)  # 3 chunks, last padded by 2
    assert (info.n, info.chunk_size, info.nchunks, info.ndevices) == (7, 3, 3, 1)
    assert chunked["tip_x"].shape == (7, 21) and chunked["ok"].all()
    assert np.allclose(chunked["tip_x"], loop_reference["tip_x"], rtol=0, atol=1e-13)
    one_chunk = run_batch(pendulum_run, P, chunk_size=64)  # capped at N: one chunk of 7, no padding
    assert np.allclose(one_chunk["tip_x"], chunked["tip_x"], rtol=0, atol=1e-14)
    # the samples really differ: tip x at t = 0 is L sin(theta0)
    assert np.allclose(chunked["tip_x"][:, 0], P[:, 0] * np.sin(P[:, 1]), atol=1e-14)


def test_interval_analysis_envelope_equals_loop_min_max(loop_reference):
    box = iv.Interval([0.5, 0.1], [1.5, 1.0], names=("length", "theta0"))
    res = iv.interval_analysis(pendulum_run, box, samples=P, chunk_size=3, valid=lambda out: out["ok"])
    assert res.envelope.count == 7
    assert np.array_equal(res.envelope.upper["tip_x"], loop_reference["tip_x"].max(axis=0))
    assert np.array_equal(res.envelope.lower["tip_x"], loop_reference["tip_x"].min(axis=0))
    assert np.array_equal(res.envelope.argmax["tip_x"], loop_reference["tip_x"].argmax(axis=0))


def _recording_fn(log, fail_after=None):
    """Closed-form fn y = x**2 + 3 whose executions are recorded (samples seen, in
    order) through a host callback; optionally raises at the call number `fail_after`."""

    def record(x):
        log.append(np.asarray(x).copy())
        if fail_after is not None and fail_after["armed"] and len(log) > fail_after["calls"]:
            raise RuntimeError("simulated interruption")
        return np.zeros_like(x)

    def fn(x):
        side = jax.pure_callback(record, jax.ShapeDtypeStruct((), jnp.float64), x, vmap_method="broadcast_all")
        return {"y": x**2 + 3.0 + side}

    return fn


def test_resume_recomputes_only_the_missing_chunk(tmp_path, capfd):
    log = []
    fn = _recording_fn(log)
    x = np.arange(10.0)
    first = run_batch(fn, x, chunk_size=4, out_dir=tmp_path, progress=True)
    assert "/3 [" in capfd.readouterr().err  # tqdm bar over the 3 chunks
    assert np.array_equal(first["y"], x**2 + 3.0)
    assert np.array_equal(np.concatenate(log), [*range(10), 9, 9])  # last chunk padded with its final sample
    files = sorted(p.name for p in tmp_path.glob("chunk_*.npz"))
    assert files == ["chunk_00000.npz", "chunk_00001.npz", "chunk_00002.npz"]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert (manifest["n"], manifest["chunk_size"], manifest["nchunks"]) == (10, 4, 3)
    assert manifest["fingerprint"] == fingerprint(x)
    mtimes = {c: (tmp_path / f"chunk_0000{c}.npz").stat().st_mtime_ns for c in (0, 2)}
    (tmp_path / "chunk_00001.npz").unlink()
    log.clear()
    again = run_batch(fn, x, chunk_size=4, out_dir=tmp_path)
    assert np.array_equal(np.concatenate(log), [4, 5, 6, 7])  # only chunk 1 ran
    assert {c: (tmp_path / f"chunk_0000{c}.npz").stat().st_mtime_ns for c in (0, 2)} == mtimes
    assert np.array_equal(again["y"], first["y"])
    log.clear()
    fresh_fn = _recording_fn(log)  # not in the compile cache: a complete run on disk needs no compile
    done, info = run_batch(fresh_fn, x, chunk_size=4, out_dir=tmp_path, return_info=True)
    assert np.array_equal(done["y"], first["y"]) and log == [] and info.computed == () and info.compile_s == 0.0


def test_interrupted_run_resumes_from_first_missing_chunk(tmp_path):
    log, flag = [], {"armed": True, "calls": 2}
    fn = _recording_fn(log, flag)
    x = np.linspace(-1.0, 1.0, 10)
    with pytest.raises(Exception, match="simulated interruption"):
        run_batch(fn, x, chunk_size=2, out_dir=tmp_path)  # dies in the third of five chunks
    saved = sorted(p.name for p in tmp_path.glob("chunk_*.npz"))
    assert saved == ["chunk_00000.npz", "chunk_00001.npz"]
    assert not list(tmp_path.glob("*.tmp*"))
    flag["armed"] = False
    log.clear()
    out, info = run_batch(fn, x, chunk_size=2, out_dir=tmp_path, return_info=True)
    assert info.computed == (2, 3, 4)
    assert np.array_equal(np.concatenate(log), x[4:])
    assert np.array_equal(out["y"], x**2 + 3.0)


def test_changed_samples_are_detected(tmp_path):
    fn = lambda s: {"y": s["a"] * s["b"]}
    s = {"a": np.arange(6.0), "b": np.ones(6)}
    run_batch(fn, s, chunk_size=4, out_dir=tmp_path)
    changed = {"a": np.arange(6.0), "b": np.r_[np.ones(5), 2.0]}
    with pytest.raises(ValueError, match="different sample set.*fingerprint"):
        run_batch(fn, changed, chunk_size=4, out_dir=tmp_path)
    with pytest.raises(ValueError, match="chunk_size: 4 -> 2"):
        run_batch(fn, s, chunk_size=2, out_dir=tmp_path)
    with pytest.raises(ValueError, match="n: 6 -> 5"):
        run_batch(fn, {"a": np.arange(5.0), "b": np.ones(5)}, chunk_size=4, out_dir=tmp_path)
    fresh = run_batch(fn, changed, chunk_size=4, out_dir=tmp_path, overwrite=True)
    assert np.array_equal(fresh["y"], [0.0, 1.0, 2.0, 3.0, 4.0, 10.0])
    assert json.loads((tmp_path / "manifest.json").read_text())["fingerprint"] == fingerprint(changed)


def test_similarity_order_follows_the_principal_axis():
    rng = np.random.default_rng(3)
    t = rng.permutation(40) / 40.0
    # two anti-correlated columns of different units, small noise off the line, an
    # integer leaf and a constant column that must not count
    s = {
        "p": np.stack([1e9 * (1 + t), 5.0 - 2.0 * t + 1e-3 * rng.standard_normal(40)], axis=1),
        "k": rng.integers(0, 100, 40),
        "c": np.full(40, 7.0),
    }
    order = similarity_order(s)
    assert sorted(order.tolist()) == list(range(40))
    key = t[order]
    assert np.all(np.diff(key) > 0) or np.all(np.diff(key) < 0)  # sorted along the line, either way round
    assert np.array_equal(similarity_order({"c": np.ones(5)}), np.arange(5))  # nothing varies: given order


def test_order_by_similarity_returns_the_given_order(tmp_path):
    log = []
    fn = _recording_fn(log)
    x = np.array([3.0, -1.0, 7.0, 0.5, 2.0, -4.0, 6.0])
    out, info = run_batch(fn, x, chunk_size=2, out_dir=tmp_path, order_by_similarity=True, return_info=True)
    assert np.array_equal(out["y"], x**2 + 3.0)  # given order, although it ran sorted
    ran = np.concatenate(log)[: x.size]
    assert np.all(np.diff(ran) > 0) or np.all(np.diff(ran) < 0)
    assert json.loads((tmp_path / "manifest.json").read_text())["order"] == "similarity"
    log.clear()
    (tmp_path / "chunk_00001.npz").unlink()  # resumes in the same order: only chunk 1 runs again
    again = run_batch(fn, x, chunk_size=2, out_dir=tmp_path, order_by_similarity=True)
    assert np.array_equal(np.concatenate(log), ran[2:4]) and np.array_equal(again["y"], out["y"])
    with pytest.raises(ValueError, match="order: 'similarity' -> 'given'"):
        run_batch(fn, x, chunk_size=2, out_dir=tmp_path)


def test_sampling_schemes():
    box = iv.Interval([0.1e-3, 20e9], [0.5e-3, 30e9])  # clearance (m), E (Pa): seed 002
    lhs = box.sample(50, "lhs", seed=3)
    strata = np.floor((lhs - box.lower) / box.width * 50).astype(int)
    for j in range(2):  # Latin hypercube: each of the 50 strata hit exactly once per parameter
        assert sorted(strata[:, j]) == list(range(50))
    assert np.array_equal(lhs, box.sample(50, "lhs", seed=3))
    uni = box.sample(1000, "uniform", seed=1)
    assert box.contains(uni).all() and uni.shape == (1000, 2)
    assert np.allclose(uni.mean(axis=0), box.center, rtol=0.02)  # E[U] = centre (std err ~1 % of width)
    grid = box.sample((3, 2), "grid")
    assert grid.shape == (6, 2)
    assert np.allclose(grid[:, 0], np.repeat([0.1e-3, 0.3e-3, 0.5e-3], 2))
    assert {tuple(v) for v in box.vertices()} <= {tuple(g) for g in grid}
    assert np.array_equal(box.vertices(), [[0.1e-3, 20e9], [0.1e-3, 30e9], [0.5e-3, 20e9], [0.5e-3, 30e9]])


def test_envelope_of_monotone_function_equals_vertex_values():
    t = np.linspace(0.0, 2.0, 9)

    def fn(p):  # increasing in p0 for t > 0, decreasing in p1: extremes at two corners
        return {"y": p[0] * jnp.asarray(t) - jnp.exp(p[1]) * jnp.asarray(t) ** 2}

    box = iv.Interval([1.0, -1.0], [2.0, 0.5])
    upper = 2.0 * t - np.exp(-1.0) * t**2  # closed form at (upper p0, lower p1)
    lower = 1.0 * t - np.exp(0.5) * t**2
    vert = iv.vertex_method(fn, box)
    assert np.allclose(vert.envelope.upper["y"], upper, rtol=0, atol=1e-14)
    assert np.allclose(vert.envelope.lower["y"], lower, rtol=0, atol=1e-14)
    assert np.array_equal(vert.envelope.argmax["y"][1:], np.full(8, 2))  # corner (2.0, -1.0)
    grid = iv.interval_analysis(fn, box, 5, method="grid")  # 25 points containing the corners
    assert np.allclose(grid.envelope.upper["y"], upper, rtol=0, atol=1e-14)
    assert np.allclose(grid.envelope.lower["y"], lower, rtol=0, atol=1e-14)
    lhs = iv.interval_analysis(fn, box, 64, method="lhs")  # inner estimate
    assert np.all(lhs.envelope.upper["y"] <= upper + 1e-14) and np.all(lhs.envelope.lower["y"] >= lower - 1e-14)
    at_samples = lhs.samples[:, :1] * t - np.exp(lhs.samples[:, 1:]) * t**2  # closed form, (64, 9)
    assert np.allclose(lhs.envelope.upper["y"], at_samples.max(axis=0), rtol=0, atol=1e-14)
    assert np.array_equal(lhs.envelope.argmin["y"][1:], at_samples.argmin(axis=0)[1:])


def test_gradient_search_finds_interior_extrema_the_vertex_method_misses():
    # y = sin p0 sin p1: max 1 at (pi/2, pi/2), min -1 at (3 pi/2, pi/2), both inside the box
    fn = lambda p: jnp.sin(p[0]) * jnp.sin(p[1])
    box = iv.Interval([0.5, 0.5], [5.0, 2.6])
    res = iv.compare(fn, box, n=128, starts=6, steps=300)
    assert abs(res["gradient_max"] - 1.0) < 1e-6 and abs(res["gradient_min"] + 1.0) < 1e-6
    assert np.allclose(res["gradient_argmax"], [np.pi / 2, np.pi / 2], atol=1e-3)
    assert np.allclose(res["gradient_argmin"], [3 * np.pi / 2, np.pi / 2], atol=1e-3)
    corners = [np.sin(a) * np.sin(b) for a in (0.5, 5.0) for b in (0.5, 2.6)]
    assert res["vertex_max"] == pytest.approx(max(corners), abs=1e-15)  # 0.247, far from 1
    assert res["vertex_min"] == pytest.approx(min(corners), abs=1e-15)
    assert -1.0 <= res["sampled_min"] < -0.98 and 0.98 < res["sampled_max"] <= 1.0
    assert res["n_vertices"] == 4 and res["n_samples"] == 128 and res["n_nonfinite"] == 0
    # an extremum on a face: projection holds the bound, y = p0 + (p1 - 0.3)^2 on [0, 1]^2
    ext = iv.extreme_search(lambda p: p[0] + (p[1] - 0.3) ** 2, iv.Interval([0, 0], [1, 1]), steps=200, starts=3)
    assert ext.min == pytest.approx(0.0, abs=1e-6) and ext.max == pytest.approx(1.49, abs=1e-6)
    assert np.allclose(ext.argmin, [0.0, 0.3], atol=1e-3) and np.allclose(ext.argmax, [1.0, 1.0])


_MULTI_DEVICE = textwrap.dedent(
    """
    import sys, numpy as np, jax
    sys.path.insert(0, sys.argv[1])
    from tests.test_interval import P, pendulum_run
    from flexjax.batch import run_batch
    assert len(jax.local_devices()) == 4, jax.local_devices()
    out, info = run_batch(pendulum_run, P, chunk_size=3, return_info=True)  # 3 -> 4 per chunk, 1 per device
    np.savez(sys.argv[2], tip_x=out["tip_x"], ndev=info.ndevices, chunk=info.chunk_size, nchunks=info.nchunks)
    """
)


def test_four_host_devices_equal_one(tmp_path, loop_reference):
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    result = tmp_path / "multi.npz"
    proc = subprocess.run(
        [sys.executable, "-c", _MULTI_DEVICE, str(REPO), str(result)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = np.load(result)
    assert (int(data["ndev"]), int(data["chunk"]), int(data["nchunks"])) == (4, 4, 2)
    assert np.allclose(data["tip_x"], loop_reference["tip_x"], rtol=0, atol=1e-13)


def _never_called(_):
    raise AssertionError("fn was traced: the input check came too late")


def test_bad_input_raises_before_compilation():
    with pytest.raises(ValueError, match=r"empty interval for parameter 1: lower=2.0 > upper=1.0"):
        iv.Interval([0.0, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="box is empty"):
        iv.Interval([], [])
    with pytest.raises(ValueError, match="finite"):
        iv.Interval([0.0, np.nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="same shape"):
        iv.Interval([0.0, 0.0], [1.0])
    box = iv.Interval([0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"NaN or inf \(sample indices \[1\]\)"):
        run_batch(_never_called, np.array([[0.5, 0.5], [np.nan, 0.5]]), chunk_size=2)
    with pytest.raises(ValueError, match="empty"):
        run_batch(_never_called, np.zeros((0, 2)), chunk_size=2)
    with pytest.raises(ValueError, match="chunk_size"):
        run_batch(_never_called, np.zeros((3, 2)), chunk_size=0)
    with pytest.raises(ValueError, match="different leading sizes"):
        run_batch(_never_called, {"a": np.zeros(3), "b": np.zeros(4)}, chunk_size=2)
    with pytest.raises(ValueError, match=r"NaN or inf \(rows \[0\]\)"):
        iv.interval_analysis(_never_called, box, samples=[[np.inf, 0.0]])
    with pytest.raises(ValueError, match="outside the box"):
        iv.interval_analysis(_never_called, box, samples=[[0.5, 1.5]])
    with pytest.raises(ValueError, match="not both"):
        iv.interval_analysis(_never_called, box, 8, samples=[[0.5, 0.5]])
    with pytest.raises(ValueError, match="method"):
        box.sample(8, "sobol")
    with pytest.raises(ValueError, match="no valid sample"):
        iv.envelope({"y": np.ones(3)}, valid=np.zeros(3, bool))
    with pytest.raises(ValueError, match="steps"):
        iv.extreme_search(_never_called, box, steps=0)
