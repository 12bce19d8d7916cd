"""Compile once per model structure: rebuilt models, new parameter values and freshly
defined lambdas of equal code reuse the compiled programs; the persistent cache serves
compiled programs again, keeps models apart and never uses a damaged entry."""

import contextlib
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax._emitter import older_emitter_available
from flexjax._structural import StructuralFunction, structural
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

TRACE = "/jax/core/compile/jaxpr_trace_duration"


@contextlib.contextmanager
def count_traces():
    """Counts the functions JAX traces for `jit` inside the block (a cache miss of any
    compiled program shows up as a trace)."""
    events = []
    listener = lambda event, duration, **kw: events.append(event) if event == TRACE else None
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield events
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


COMPILE = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def count_compiles():
    """Names of the programs XLA compiles (or loads from the persistent cache) inside the
    block; not the once-per-process probe of `older_emitter_available` (one operation)."""
    older_emitter_available()
    names = []
    listener = lambda event, duration, fun_name=None, **kw: names.append(fun_name) if event == COMPILE else None
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield names
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def test_start_state_helpers_are_one_program_each():
    """A model's start-state helper is one compiled program, not one small program per
    array operation (each a compile of its own on a first call), and a new parameter
    value compiles nothing. The states themselves are checked against their definitions."""
    crank = flexible_slider_crank(omega=150.0, n_elements=3)  # a size no other test uses
    with count_compiles() as compiles:
        q0, v0 = flexible_slider_crank_state(crank)
    assert len(compiles) <= 1, compiles
    with count_compiles() as compiles:
        q1, v1 = flexible_slider_crank_state(flexible_slider_crank(omega=160.0, n_elements=3))
    assert compiles == []
    # consistent with the joints and drivers: Phi = 0 and Phi_q v + Phi_t = 0
    Phi, J = crank.constraints(q0, 0.0), crank.constraints_q(q0, 0.0)
    Phi_t = jax.jacfwd(crank.constraints, argnums=1)(q0, 0.0)
    assert float(jnp.max(jnp.abs(Phi))) < 1e-14
    assert float(jnp.max(jnp.abs(J @ v0 + Phi_t))) < 1e-11
    np.testing.assert_array_equal(np.asarray(q1), np.asarray(q0))
    np.testing.assert_allclose(np.asarray(v1), np.asarray(v0) * 160.0 / 150.0, rtol=1e-14, atol=1e-14)
    # a straight ANCF beam: node k at start + (k / n) L t, slope t = (cos a, sin a)
    beam = fj.AncfBeam2D(1.3, 7800.0, 1e-4, 1e-8, 2e11, 5)
    with count_compiles() as compiles:
        q = beam.straight_coordinates((0.1, 0.2), 0.3)
    assert len(compiles) <= 1, compiles
    t = np.array([np.cos(0.3), np.sin(0.3)])
    nodes = [np.concatenate([np.array([0.1, 0.2]) + k / 5 * 1.3 * t, t]) for k in range(6)]
    np.testing.assert_allclose(np.asarray(q), np.concatenate(nodes), rtol=0, atol=1e-15)
    with count_compiles() as compiles:
        fj.models.pendulum_state(0.3, 1.0)
        q, _ = fj.models.pendulum_state(0.4, 2.0)
    assert len(compiles) <= 1, compiles
    np.testing.assert_allclose(np.asarray(q), [0.0, 0.0, 2 * np.sin(0.4), -2 * np.cos(0.4)], rtol=1e-15)


def test_model_functions_on_numbers_are_one_program_each():
    """`System.constraints`, `constraints_q`, `mass` and `energy` called on numbers are
    one compiled program each (not one small program per array operation), reused for
    new states, times and a rebuilt model; inside `jit`, `vmap` and `grad` they are traced
    as written, with equal values."""
    crank = flexible_slider_crank(omega=150.0, n_elements=5)  # a size no other test uses
    q, v = flexible_slider_crank_state(crank)
    methods = {
        "constraints": lambda s, q, v, t: s.constraints(q, t),
        "constraints_q": lambda s, q, v, t: s.constraints_q(q, t),
        "mass": lambda s, q, v, t: s.mass(q),
        "energy": lambda s, q, v, t: s.energy(q, v, t),
    }
    q1, rebuilt = q + 1e-3, flexible_slider_crank(omega=160.0, n_elements=5)
    for name, f in methods.items():
        with count_compiles() as compiles:
            value = f(crank, q, v, 0.0)
        assert compiles == [f"jit({name})"], compiles
        with count_compiles() as compiles:  # another state and time, a rebuilt model
            f(crank, q1, v, 0.01)
            f(rebuilt, q, v, 0.0)
        assert compiles == [], (name, compiles)
        traced = jax.jit(lambda q, f=f: f(crank, q, v, 0.0))(q)
        np.testing.assert_allclose(
            np.asarray(value), np.asarray(traced), rtol=1e-13, atol=1e-13 * (1.0 + float(jnp.max(jnp.abs(traced))))
        )
    # under vmap: each row equals a call on numbers; under grad: dE/dv = M v
    qs = jnp.stack([q, q1])
    rows = jax.vmap(lambda qi: crank.constraints(qi, 0.0))(qs)
    np.testing.assert_allclose(np.asarray(rows[1]), np.asarray(crank.constraints(qs[1], 0.0)), rtol=0, atol=1e-14)
    dE = jax.grad(lambda vv: crank.energy(q, vv, 0.0))(v)
    np.testing.assert_allclose(np.asarray(dE), np.asarray(crank.mass(q) @ v), rtol=1e-12, atol=1e-9)


def test_gradient_through_a_projected_start_checks_it_in_python():
    """Under `jax.grad` the projection's residuals are known numbers: they are checked in
    Python (an `InconsistentInitialConditions` naming them), with no small programs
    for the check; the gradient's programs are the run's two (the forward run with its
    pullback, and the pullback)."""
    q0, v0 = fj.models.pendulum_state(0.3)
    off = q0.at[3].add(1e-7)  # projected, as under any grad
    loss = lambda length: fj.simulate(fj.models.pendulum(length=length), off, v0, 0.004, 1e-3).q[-1, 2]
    jax.grad(loss)(1.0)  # compiled once (the loss's own indexing included)
    with count_compiles() as compiles:
        jax.grad(loss)(1.1)
    assert compiles == [], compiles
    with count_compiles() as compiles:
        # another program (checkpointed), the same shapes: the loss's indexing is compiled
        run = lambda length: fj.simulate(fj.models.pendulum(length=length), off, v0, 0.004, 1e-3, checkpoint=True)
        jax.grad(lambda length: run(length).q[-1, 2])(1.0)
    assert compiles == ["jit(_whole_run)", "jit(_whole_run_pullback)"], compiles
    bar = fj.RigidBar2D(1.0, 1.0)
    joints = lambda x: [
        fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0]),
        fj.RevoluteJoint(0, [1.0, 0.0], None, [x, 0.0]),
    ]
    impossible = lambda x: fj.simulate(
        fj.System([bar], joints(x)), jnp.array([0.0, 0.0, 1.0, 0.0]), jnp.zeros(4), 0.002, 1e-3
    ).q[-1, 0]
    with pytest.raises(fj.InconsistentInitialConditions, match=r"max \|Phi\|"):
        jax.grad(impossible)(3.0)


def test_collector_paused_while_tracing_and_handed_back():
    """The entry points trace with Python's cyclic garbage collector paused
    (`flexjax._gc`): it is off while `simulate`'s program is traced (seen from inside the
    trace, through `outputs`) and on in the same call unpaused; afterwards it is as the
    caller left it, also after an error, and one the caller disabled stays disabled."""
    import gc

    system, state = fj.models.pendulum(), fj.models.pendulum_state(0.3)
    seen = []
    probe = lambda t, q, v: (seen.append(gc.isenabled()), q[0])[1]  # runs while tracing
    paused = fj.simulate(system, *state, 13e-3, 1e-3, outputs=probe)
    assert seen and not any(seen) and gc.isenabled()
    seen.clear()
    unpaused = fj.simulate.__wrapped__(system, *state, 17e-3, 1e-3, outputs=probe)
    assert seen and all(seen)
    try:
        gc.disable()
        fj.simulate(system, *state, 13e-3, 1e-3)
        assert not gc.isenabled()
        gc.enable()
        with pytest.raises(ValueError):
            fj.simulate(system, *state, 13e-3, -1e-3)
        assert gc.isenabled()
    finally:
        gc.enable()
    # the pause changes no number: both runs agree where they overlap
    np.testing.assert_array_equal(np.asarray(paused.q), np.asarray(unpaused.q[:14]))
    np.testing.assert_array_equal(np.asarray(paused.outputs), np.asarray(paused.q[:, 0]))


def _crank(omega=150.0, n_elements=1, guide=0.0):
    """The flexible slider-crank with its slider guide given as a lambda defined anew at
    every call (what a user's builder function does)."""
    system = flexible_slider_crank(omega=omega, n_elements=n_elements)
    guide_joint = fj.coordinate_driver(2, 1, lambda t: guide + 0.0 * t)
    return fj.System(system.bodies, system.joints[:-1] + (guide_joint,), system.force_elements)


def _tip(system, **kw):
    q0, v0 = flexible_slider_crank_state(system)
    return fj.simulate(system, q0, v0, 0.002, 1e-4, save_every=10, **kw)


@pytest.fixture(scope="module")
def reference():
    return _tip(_crank())


def test_rebuilt_model_and_new_parameters_do_not_recompile(reference):
    with count_traces() as traces:
        again = _tip(_crank())
        faster = _tip(_crank(omega=160.0))
    assert traces == []
    np.testing.assert_array_equal(np.asarray(again.q), np.asarray(reference.q))
    # the parameter is a leaf, not a constant of the program: a different answer
    assert float(jnp.max(jnp.abs(faster.q[-1] - reference.q[-1]))) > 1e-4


def test_float_parameters_set_with_tree_at_do_not_recompile(reference):
    """`eqx.tree_at` bypasses the field converters, so a parameter set to a Python float
    would be a static argument of `eqx.filter_jit` (one compile per value); the entry
    points make such leaves arrays."""
    rod = lambda youngs: eqx.tree_at(lambda s: s.bodies[1].youngs, _crank(), youngs)
    with count_traces() as traces:
        same = _tip(rod(2.1e11))  # the reference's modulus, as a Python float
        soft = _tip(rod(2.1e7))
    assert traces == []
    np.testing.assert_array_equal(np.asarray(same.q), np.asarray(reference.q))
    assert float(jnp.max(jnp.abs(soft.q[-1] - reference.q[-1]))) > 1e-6  # a softer rod
    # the same for `modes`: a clamped two-element cantilever, f ~ sqrt(E)
    beam = fj.AncfBeam2D(1.0, 7800.0, 1e-4, 1e-8 / 12, 2e11, 2)
    cantilever = lambda youngs: fj.System([eqx.tree_at(lambda b: b.youngs, beam, youngs)], [fj.AncfClamp(0, 0)])
    q = beam.straight_coordinates()
    f1 = fj.modes(cantilever(2e11), q, n=1).frequencies[0]
    with count_traces() as traces:
        f2 = fj.modes(cantilever(8e11), q, n=1).frequencies[0]
    assert traces == []
    assert float(f2) == pytest.approx(2 * float(f1), rel=1e-12)


def test_other_structure_or_other_closure_value_compiles_anew(reference):
    with count_traces() as traces:
        finer = _tip(_crank(n_elements=2))
    assert len(traces) >= 1
    # a lambda closing over another value is another program, never a cache hit
    with count_traces() as traces, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the start is moved onto the raised guide, on purpose
        lifted = _tip(_crank(guide=1e-3))
    assert len(traces) >= 1
    assert float(lifted.q[-1, -1]) == pytest.approx(1e-3, abs=1e-12)  # the slider runs on y = 1 mm
    assert finer.q.shape[1] == reference.q.shape[1] + 4


def _slider(t, q, v):
    return {"crank_tip": q[2:4], "crank_speed": jnp.sqrt(v[2:4] @ v[2:4]), "slider_x": q[-2]}


def test_outputs_and_their_gradient_with_a_rebuilt_model(reference):
    tr = _tip(_crank(), outputs=_slider)
    np.testing.assert_allclose(np.asarray(tr.outputs["crank_tip"]), np.asarray(reference.q[:, 2:4]), atol=1e-14)
    np.testing.assert_allclose(np.asarray(tr.outputs["slider_x"]), np.asarray(reference.q[:, -2]), atol=1e-14)
    # the crank tip turns at omega r = 150 * 0.15 m/s (to the index-3 velocity drift)
    np.testing.assert_allclose(np.asarray(tr.outputs["crank_speed"]), 22.5, rtol=1e-4)

    def slider_x(omega):
        return _tip(_crank(omega=omega), outputs=_slider).outputs["slider_x"][-1]

    g1 = jax.grad(slider_x)(150.0)
    with count_traces() as traces:
        g2 = jax.grad(slider_x)(150.0)
    assert traces == []
    assert float(g1) == float(g2)
    h = 1e-3
    fd = (slider_x(150.0 + h) - slider_x(150.0 - h)) / (2 * h)
    assert float(g1) == pytest.approx(float(fd), rel=1e-5)
    ode = fj.simulate_ode(
        fj.models.pendulum(), *fj.models.pendulum_state(0.1), 0.1, ts=jnp.linspace(0, 0.1, 5), outputs=lambda t, q, v: t
    )
    np.testing.assert_allclose(np.asarray(ode.outputs), np.linspace(0, 0.1, 5), atol=1e-15)


def test_structural_equality_of_functions():
    def make(c, arr):
        return lambda t: c * t + arr

    a, b = StructuralFunction(make(2.0, jnp.ones(3))), StructuralFunction(make(2.0, jnp.ones(3)))
    assert a == b and hash(a) == hash(b)
    assert a != StructuralFunction(make(3.0, jnp.ones(3)))
    assert a != StructuralFunction(make(2.0, jnp.zeros(3)))
    assert a != StructuralFunction(lambda t: 2.0 * t + jnp.ones(3))  # other code
    wrapped = structural((make(1.0, 0.0), 1.0))
    assert isinstance(wrapped[0], StructuralFunction) and float(wrapped[0](2.0)) == 2.0


RETRIEVAL = "/jax/compilation_cache/cache_retrieval_time_sec"


@contextlib.contextmanager
def cache_folder(path):
    """JAX's persistent cache pointed at `path` inside the block, then restored."""
    from jax.experimental.compilation_cache import compilation_cache

    old = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(path))
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_compilation_cache_dir", old)
        compilation_cache.reset_cache()


def _fresh_run(model, state):
    """A run compiled from nothing in this process: cleared in-memory caches, so the
    executable comes from the persistent cache or from XLA."""
    jax.clear_caches()
    hits = []
    listener = lambda event, duration, **kw: hits.append(event) if event == RETRIEVAL else None
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        value = float(fj.simulate(model, *state, 0.05, 1e-3, save_every=50).q[-1, -1])
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return len(hits), value


def test_persistent_cache_serves_cleared_caches_and_keeps_models_apart(tmp_path):
    pendulum = (fj.models.pendulum(), fj.models.pendulum_state(0.3))
    double = (fj.models.double_pendulum(), fj.models.double_pendulum_state(0.3, 0.1))
    with cache_folder(tmp_path):
        hits, first = _fresh_run(*pendulum)
        assert hits == 0 and any(tmp_path.iterdir())
        hits, again = _fresh_run(*pendulum)
        assert hits >= 1 and again == first
        # another model in the same folder: its own programs, its own answer
        _, other = _fresh_run(*double)
        assert other != first
        # damaged entries are compiled anew, never used
        for entry in tmp_path.iterdir():
            if entry.is_file():
                entry.write_bytes(b"not an executable")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # JAX reports the unreadable entries
            hits, damaged = _fresh_run(*pendulum)
        assert damaged == first
    reference = fj.simulate(double[0], *double[1], 0.05, 1e-3, save_every=50)
    assert other == float(reference.q[-1, -1])


def test_cache_switch_and_user_folder(monkeypatch, tmp_path):
    from flexjax import _cache

    monkeypatch.setenv("FLEXJAX_NO_CACHE", "1")
    assert _cache.enable_persistent_cache() is None
    monkeypatch.delenv("FLEXJAX_NO_CACHE")
    monkeypatch.setenv("FLEXJAX_CACHE_DIR", str(tmp_path / "mine"))
    assert _cache.default_cache_dir() == tmp_path / "mine"
    configured = jax.config.jax_compilation_cache_dir
    if configured:  # a folder configured for JAX itself (here: by the import) is left as it is
        assert _cache.enable_persistent_cache() == _cache.pathlib.Path(configured)


REQUEST, HIT = "/jax/compilation_cache/compile_requests_use_cache", "/jax/compilation_cache/cache_hits"


def _flfj(k=1.0):
    """The FLFJ arm (a `ModalHubBeam`) under PD control of its hub along a ramp."""
    from flexjax.control.pd import PD, CoordinateControl
    from flexjax.control.references import Ramp
    from flexjax.models.flfj_arm import KD, flfj_arm

    return fj.System([flfj_arm(k)], [], [CoordinateControl(0, 0, PD(0.6, KD, Ramp(1.0, 1.0)))])


def _cleared_call(fn):
    """`fn()` after clearing the in-memory caches; returns its value, the number of
    programs it asked the persistent cache for and the number found there."""
    jax.clear_caches()
    events = []
    listener = lambda event, **kw: events.append(event)
    jax.monitoring.register_event_listener(listener)
    try:
        value = np.asarray(fn())
    finally:
        jax.monitoring.unregister_event_listener(listener)
    return value, events.count(REQUEST), events.count(HIT)


@pytest.mark.parametrize("run", ["ode_adaptive", "ode_fixed_step", "generalized_alpha"])
def test_ode_and_modal_beam_programs_are_kept_by_the_persistent_cache(tmp_path, run):
    """diffrax's checks of the save times and of dt0 and the `ModalHubBeam` roots check
    are host callbacks inside a program, and JAX never caches such a program; made in
    Python before compiling, they leave the program, which a cleared process then loads."""
    system = _flfj()
    z = jnp.zeros(system.nq)
    calls = {
        "ode_adaptive": lambda: fj.simulate_ode(system, z, z, 0.02, ts=jnp.linspace(0.0, 0.02, 5)).q,
        "ode_fixed_step": lambda: fj.simulate_ode(system, z, z, 0.02, rtol=None, dt0=1e-3).q,
        "generalized_alpha": lambda: fj.simulate(system, z, z, 0.02, 1e-3, save_every=10).q,
    }
    with cache_folder(tmp_path):
        first, asked, found = _cleared_call(calls[run])
        assert asked > found  # compiled here
        again, asked, found = _cleared_call(calls[run])
    assert asked >= 1 and found == asked and np.array_equal(again, first)
    assert np.all(np.abs(first[-1]) > 0)  # the controller turned the hub and bent the beam


def test_checks_left_out_of_checked_programs_stay_in_traced_ones():
    """Stale modal roots raise before compiling; after checked runs of the same shapes
    (programs without the checks), a beam edited and save times passed inside `jit` are
    still checked inside the program."""
    import equinox as eqx

    good = _flfj()
    stale = eqx.tree_at(lambda s: s.bodies[0].k, good, jnp.asarray(2.0, float))
    z = jnp.zeros(good.nq)
    with pytest.raises(ValueError, match="cached roots"):
        fj.simulate_ode(stale, z, z, 0.02)
    with pytest.raises(ValueError, match="cached roots"):
        fj.simulate(stale, z, z, 0.02, 1e-3)
    fj.simulate_ode(good, z, z, 0.02, ts=jnp.linspace(0.0, 0.02, 3))  # checked programs first
    fj.simulate(good, z, z, 0.02, 1e-3)
    edit = lambda k: eqx.tree_at(lambda s: s.bodies[0].k, _flfj(), k)
    with pytest.raises(Exception, match="cached roots"):
        jax.block_until_ready(jax.jit(lambda k: fj.simulate_ode(edit(k), z, z, 0.02).q)(2.0))
    with pytest.raises(Exception, match="cached roots"):
        jax.block_until_ready(jax.jit(lambda k: fj.simulate(edit(k), z, z, 0.02, 1e-3).q)(2.0))
    late = jnp.array([0.0, 0.01, 0.03])  # beyond t1
    with pytest.raises(Exception, match="saveat.ts must lie between"):
        jax.block_until_ready(jax.jit(lambda ts: fj.simulate_ode(good, z, z, 0.02, ts=ts).q)(late))
