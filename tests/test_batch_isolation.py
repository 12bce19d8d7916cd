"""A failing sample never changes another sample's result under `vmap` / `run_batch`.

The model: the flexible slider-crank with a 2-element rod, three healthy samples
(slider masses 0.4, 0.5 and 0.6 kg) and one that fails on purpose: a 1 MN push on its
slider from 10 ms on, far beyond what the rod carries, so that its Newton solve fails
within a few steps whatever the solver. The references are the samples' single
(unbatched) `simulate` runs and, for the exact checks, the same batch with the failing
sample replaced by a healthy one (same shapes, so the same compiled program).

Why the per-sample solvers are compared bit for bit with that batch and not with the
single runs: the single and the batched programs already differ in the last bits when
no sample fails, because XLA does not compile the same arithmetic the same way for one
sample and for a batch. On CPUs with fused multiply-add it fuses a multiply and an add
in one program and not in the other (the differences vanish with
`XLA_FLAGS=--xla_cpu_max_isa=AVX`). And a product of an unbatched matrix with batched
vectors (the ANCF element kernels, `flexjax.bodies.ancf2d`) becomes one matrix product
with the batch as extra columns, whose summation order changes with the column count.
Against the single runs the healthy samples are therefore checked to the Newton
tolerance.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax.batch import run_batch
from flexjax.forces.applied import PointForce
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state
from flexjax.results import code
from flexjax.solvers._batching import batch_any, batch_linearized, batch_mean, formed_where

H, T1, SAVE_EVERY, PUSH_START = 2e-4, 0.016, 4, 0.01
SAMPLES = np.array([[0.4, 0.0], [0.5, 0.0], [0.6, 0.0], [0.5, 1e6]])  # slider mass (kg), push (N)
HEALTHY = [0, 1, 2]
FAILING = 3
# positions agree to the Newton tolerance (rtol 1e-10 per step, accumulated over 80
# steps); velocities to that divided by the step (the Newmark update)
Q_TOL = 5e-9
FIELDS = ("q", "v", "a", "lam", "newton_iterations", "result", "failed_step", "failed_time")


class Push(eqx.Module):
    """A force `amplitude` (N) on the slider along -x from `PUSH_START` on."""

    amplitude: jax.Array = eqx.field(converter=jnp.asarray)

    def __call__(self, t):
        return jnp.stack([-self.amplitude * (t >= PUSH_START), jnp.zeros_like(self.amplitude)])


def _run(p, solver):
    crank = flexible_slider_crank(n_elements=2, slider_mass=p[0])
    system = fj.System(crank.bodies, crank.joints, crank.force_elements + (PointForce(2, (0.0, 0.0), Push(p[1])),))
    q0, v0 = flexible_slider_crank_state(system)
    return fj.simulate(system, q0, v0, T1, H, solver=solver, save_every=SAVE_EVERY, throw=False)


def _singles(solver):
    return [jax.tree_util.tree_map(np.asarray, _run(jnp.asarray(p), solver)) for p in SAMPLES]


def _batch(solver, samples):
    return jax.tree_util.tree_map(np.asarray, jax.vmap(lambda p: _run(p, solver))(jnp.asarray(samples)))


def _field(tr, name):
    """A trajectory field as an array (the `RESULTS` item as its integer code)."""
    return code(tr.result) if name == "result" else getattr(tr, name)


def _sample(batch, i):
    return jax.tree_util.tree_map(lambda x: x[i], batch)


@pytest.fixture(scope="module")
def singles():
    """Single runs with the default solver (a kept Newton matrix per run)."""
    return _singles(fj.GeneralizedAlpha())


def _assert_failed_and_held(tr, reference):
    """Marked failed where its single run failed, and held from then on: every saved
    instant after the failure repeats the state the failed step ended with."""
    assert not tr.succeeded
    assert int(tr.failed_step) == int(reference.failed_step) > 0
    assert float(tr.failed_time) == pytest.approx(float(reference.failed_step) * H, abs=1e-12)
    assert float(tr.failed_time) >= PUSH_START  # the push acts from the end of that step on
    after = np.nonzero(tr.t > tr.failed_time)[0]
    assert after.size >= 2
    for name in ("q", "v", "lam"):
        held = getattr(tr, name)[after]
        assert np.array_equal(held, np.broadcast_to(held[0], held.shape), equal_nan=True), name
    assert np.all(tr.newton_iterations[after[1:]] == 0)


def _assert_within_newton_tolerance(tr, reference):
    assert tr.succeeded
    scale = np.max(np.abs(reference.q))
    np.testing.assert_allclose(tr.q, reference.q, rtol=0, atol=Q_TOL * scale)
    np.testing.assert_allclose(tr.v, reference.v, rtol=0, atol=Q_TOL * scale / H)


def test_the_failing_sample_fails_alone(singles):
    for i in HEALTHY:
        assert singles[i].succeeded
    _assert_failed_and_held(singles[FAILING], singles[FAILING])


@pytest.mark.parametrize("newton", ["auto", "full"])
def test_per_sample_matrices_healthy_samples_unchanged_bit_for_bit(newton, singles):
    """With a Newton matrix per sample (the default kept one, or full Newton), the
    healthy samples of the batch with the failing sample are bit-identical to those of
    the batch in which it is replaced by a healthy one, and equal to their single runs
    to the Newton tolerance (bit for bit only up to the rounding of the batched
    program, see the module docstring); the failing one fails where its single run
    does."""
    solver = fj.GeneralizedAlpha(newton=newton)
    reference = singles if newton == "auto" else _singles(solver)
    replaced = SAMPLES.copy()
    replaced[FAILING] = SAMPLES[1]
    with_failure, without = _batch(solver, SAMPLES), _batch(solver, replaced)
    for i in HEALTHY:
        for name in FIELDS:
            assert np.array_equal(_field(with_failure, name)[i], _field(without, name)[i], equal_nan=True), (i, name)
        _assert_within_newton_tolerance(_sample(with_failure, i), reference[i])
    _assert_failed_and_held(_sample(with_failure, FAILING), reference[FAILING])


def test_shared_matrix_healthy_samples_match_single_runs_and_healthy_batch(singles):
    """With one Newton matrix for the batch (`run_batch`), the healthy samples succeed
    and equal, to the Newton tolerance, both their single runs and a batch of the
    healthy samples alone; the failing sample fails where its single run does and is
    held there."""
    solver = fj.GeneralizedAlpha(newton="modified", shared_matrix=True)
    out = run_batch(lambda p: _run(p, solver), SAMPLES, chunk_size=len(SAMPLES))
    healthy_only = _batch(solver, SAMPLES[HEALTHY])
    for k, i in enumerate(HEALTHY):
        tr = _sample(out, i)
        _assert_within_newton_tolerance(tr, singles[i])
        _assert_within_newton_tolerance(tr, _sample(healthy_only, k))
    _assert_failed_and_held(_sample(out, FAILING), singles[FAILING])


def test_batch_functions_leave_out_the_masked_samples():
    """`batch_mean`, `batch_any` and `batch_linearized` with a mask equal their values
    on the selected samples alone, even when the others hold NaN and inf; without a
    mask they are unchanged."""
    x = jnp.array([[1.0, 2.0], [jnp.nan, jnp.inf], [3.0, 5.0], [2.0, -1.0]])
    ok = jnp.array([True, False, True, True])
    sel = x[np.asarray(ok)]
    np.testing.assert_allclose(jax.vmap(batch_mean)(x, ok)[0], jnp.mean(sel, axis=0), rtol=1e-15)
    np.testing.assert_array_equal(jax.vmap(batch_mean)(sel)[0], jnp.mean(sel, axis=0))
    flags = jnp.array([False, True, False, False])
    assert not bool(jax.vmap(batch_any)(flags, ok)[0])
    assert bool(jax.vmap(batch_any)(flags)[0])
    assert not bool(batch_any(jnp.array(True), jnp.array(False)))  # no batch: flag & ok

    fun = lambda y, p: jnp.sin(y) * p["a"] + p["b"] ** 2 * y

    def lin(y, a, b, ok=None):
        return batch_linearized(fun, {"a": a, "b": b}, ok)(y)

    a = jnp.array([1.0, 50.0, 1.2, 0.9])
    b = jnp.array([2.0, -7.0, 2.1, 2.3])
    masked = jax.vmap(lin)(x, a, b, ok)
    alone = jax.vmap(lin)(sel, a[np.asarray(ok)], b[np.asarray(ok)])
    for got, want in zip(masked[:2], alone[:2], strict=True):  # value and slope (shared)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(masked[2][np.asarray(ok)], alone[2], rtol=1e-12)  # the selected samples' t


def test_new_matrices_are_formed_only_by_the_samples_that_ask():
    """`formed_where` (how a batch forms its kept Newton matrices) evaluates `make` once
    per sample that asks, with that sample's own closed-over values, and leaves the
    others' `old`; the old rule evaluated it for the whole batch whenever one sample
    asked. Nested `vmap` and no `vmap` give the per-sample definition too."""
    calls = []

    def formed(need, x, scale, old):
        def make(y):  # closes over a batched value, as a Newton matrix over its sample's model
            jax.debug.callback(lambda v: calls.append(float(v)), y)
            return y * scale, -y

        return formed_where(need, make, x, old)

    def reference(need, x, scale, old):
        return tuple(np.where(need, new, o) for new, o in zip((x * scale, -x), old, strict=True))

    need = jnp.array([True, False, True, False])
    x, scale = jnp.array([1.0, 2.0, 3.0, 4.0]), jnp.array([10.0, 20.0, 30.0, 40.0])
    old = (jnp.full(4, 7.0), jnp.full(4, 8.0))
    got = jax.jit(jax.vmap(formed))(need, x, scale, old)
    jax.effects_barrier()
    assert sorted(calls) == [1.0, 3.0]  # two evaluations, of the two samples that asked
    for g, w in zip(got, reference(need, x, scale, old), strict=True):
        np.testing.assert_array_equal(g, w)

    grid = lambda a: jnp.stack([a, a[::-1]])  # a (2, 4) batch for a nested vmap
    nested = jax.jit(jax.vmap(jax.vmap(formed)))(grid(need), grid(x), grid(scale), (grid(old[0]), grid(old[1])))
    want = reference(np.asarray(grid(need)), grid(x), grid(scale), (grid(old[0]), grid(old[1])))
    for g, w in zip(nested, want, strict=True):
        np.testing.assert_array_equal(g, w)
    for flag in (True, False):  # no batch: a branch
        got = formed(jnp.array(flag), x[0], scale[0], (old[0][0], old[1][0]))
        assert [float(v) for v in got] == ([10.0, -1.0] if flag else [7.0, 8.0])
    for flag in (True, False):  # a batch of one sample: a branch too
        calls.clear()
        got = jax.jit(jax.vmap(formed))(jnp.array([flag]), x[:1], scale[:1], (old[0][:1], old[1][:1]))
        jax.effects_barrier()
        assert calls == ([1.0] if flag else [])
        assert [v.tolist() for v in got] == ([[10.0], [-1.0]] if flag else [[7.0], [8.0]])


def test_a_batch_of_one_sample_runs_like_the_single_run(singles):
    """A one-sample `vmap` (a `run_batch` chunk on a device of its own) takes the
    per-sample branches of a single run and gives its result, the failing sample too."""
    solver = fj.GeneralizedAlpha()
    for i in (0, FAILING):
        one = _sample(_batch(solver, SAMPLES[i : i + 1]), 0)
        if i == FAILING:
            _assert_failed_and_held(one, singles[i])
        else:
            _assert_within_newton_tolerance(one, singles[i])
            assert np.array_equal(one.newton_iterations, singles[i].newton_iterations)
