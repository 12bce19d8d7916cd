"""Failures are never reported as successes, and bad input is named before anything compiles.

Small models only (a pendulum, a particle, the three-crank linkage of `test_redundant`);
most checks run before compilation, and the diagnosis of failed runs is tested on
trajectories built by hand, so that the file stays fast.
"""

import json
import math
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import ConsistencyWarning, models
from flexjax._diagnose import check_dae_start
from flexjax.batch import run_batch
from flexjax.contact import PointSurfaceContact, first_contact, simulate_contact
from flexjax.results import RESULTS
from flexjax.trajectory import SolverError, Trajectory, check_result

from .test_redundant import linkage


def pendulum():
    """Rigid 1 m bar pinned at the origin under gravity; q0 hanging at 1 rad."""
    system = fj.System(
        [fj.RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, (0.0, 0.0), None, (0.0, 0.0))], [fj.Gravity((0.0, -9.81))]
    )
    q0 = jnp.array([0.0, 0.0, np.sin(1.0), -np.cos(1.0)])
    return system, q0


def particle():
    return fj.System([fj.PointMass(1.0)], [], [fj.Gravity((0.0, -9.81))])


def floor():
    return PointSurfaceContact(0, (0.0, 0.0), (0.0, 0.0), (0.0, 1.0), mu=0.3, restitution=0.0)


def hand_trajectory(q, lam, res, t, result, failed_time, failed_step=-1, dtype=float):
    """A `Trajectory` from arrays (no simulation), for the diagnosis of failures."""
    q = jnp.asarray(q, dtype)
    ns = q.shape[0]
    return Trajectory(
        t=jnp.asarray(t, dtype),
        q=q,
        v=jnp.zeros_like(q),
        a=jnp.zeros_like(q),
        lam=jnp.asarray(lam, dtype),
        energy=jnp.zeros(ns, dtype),
        constraint_residual=jnp.asarray(res, dtype),
        velocity_residual=jnp.zeros(ns, dtype),
        result=result,
        failed_step=jnp.array(failed_step),
        failed_time=jnp.array(failed_time, dtype),
        failed_residual=jnp.array(3.5, dtype),
        newton_iterations=jnp.zeros(ns, int),
        event_time=jnp.array(jnp.inf),
        force_state=jnp.zeros((ns, 0), dtype),
    )


# -- 1. a diverged fixed-step ODE run is a failure ------------------------------------
def test_diverged_fixed_step_ode_run_fails_with_time_and_cause():
    system, q0 = pendulum()
    kw = dict(form=fj.Baumgarte(50.0, 50.0), solver=fj.RK4(), dt0=0.1, rtol=None, ts=jnp.linspace(0.0, 20.0, 41))
    with pytest.raises(SolverError, match=r"at t = \d") as err:
        fj.simulate_ode(system, q0, jnp.zeros(4), 20.0, **kw)
    msg = str(err.value)
    assert "NaN or infinite from t =" in msg and "constraint drift diverges" in msg and "Baumgarte" in msg
    tr = fj.simulate_ode(system, q0, jnp.zeros(4), 20.0, throw=False, **kw)
    assert bool(tr.result == RESULTS.ode_failed)
    bad = ~(np.isfinite(np.asarray(tr.q)).all(axis=1) & np.isfinite(np.asarray(tr.v)).all(axis=1))
    first_bad = float(tr.t[np.argmax(bad)])
    assert float(tr.failed_time) == first_bad and 0.0 < first_bad < 20.0


# -- 2. redundant constraints without redundant=True ----------------------------------
def test_redundant_constraints_refused_before_compiling():
    system, q0 = linkage()
    with pytest.raises(ValueError, match=r"redundant: Phi_q has rank 15 of its 16 rows") as err:
        fj.simulate(system, q0, jnp.zeros(16), t1=6e-3, dt=1e-3, solver=fj.GeneralizedAlpha(rho_inf=0.8))
    assert "GeneralizedAlpha(redundant=True)" in str(err.value) and "UdwadiaKalaba" in str(err.value)
    with pytest.raises(ValueError, match="form=UdwadiaKalaba"):
        fj.simulate_ode(system, q0, jnp.zeros(16), 0.1, form=fj.Baumgarte(10.0, 10.0))
    # the least-squares solver and full-rank models pass the check
    check_dae_start(system, fj.GeneralizedAlpha(redundant=True), q0, jnp.zeros(16), 0.0, True)
    pend, p0 = pendulum()
    check_dae_start(pend, fj.GeneralizedAlpha(), p0, jnp.zeros(4), 0.0, True)
    crank = models.slider_crank()
    q, v = models.slider_crank_state()[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # consistent, full rank: silent
        check_dae_start(crank, fj.GeneralizedAlpha(), q, v, 0.0, True)


def test_huge_multipliers_named_as_singular_newton_matrix():
    # a Newton failure after multipliers of 2e17 (the redundant linkage without the check)
    t = np.arange(8) * 1e-3
    tr = hand_trajectory(np.zeros((8, 2)), np.full((8, 3), 2e17), np.zeros(8), t, RESULTS.newton_failed, 7e-3, 7)
    with pytest.raises(SolverError, match=r"at step 7 \(t = 0.007 s\): scaled residual 3.500e\+00") as err:
        check_result(tr)
    assert "|lambda| = 2.000e+17" in str(err.value) and "redundant=True" in str(err.value)
    assert "reduce the step size" not in str(err.value)


# -- 3. first_contact flags giving up and starting inside ----------------------------
def test_first_contact_flags_max_steps_and_initial_penetration():
    sys_, contact = particle(), floor()
    q0, v0 = jnp.array([0.0, 1.0]), jnp.zeros(2)
    with pytest.raises(SolverError, match="gave up before t1 .* unknown, not infinite"):
        first_contact(sys_, contact, q0, v0, 10.0, max_steps=2)
    tc, _, _ = first_contact(sys_, contact, q0, v0, 10.0, max_steps=2, throw=False)
    assert math.isnan(float(tc))
    with pytest.raises(ValueError, match=r"starts 1.000e-01 m inside the surface"):
        first_contact(sys_, contact, jnp.array([0.0, -0.1]), v0, 1.0)
    tc, _, _ = first_contact(sys_, contact, jnp.array([0.0, -0.1]), v0, 1.0, throw=False)
    assert math.isnan(float(tc))
    # no contact before t1 is still inf, and a contact is found
    assert float(first_contact(sys_, contact, q0, v0, 0.1)[0]) == math.inf
    assert abs(float(first_contact(sys_, contact, q0, v0, 1.0)[0]) - math.sqrt(2 / 9.81)) < 1e-8


# -- 4. attachment points are shape-checked -------------------------------------------
@pytest.mark.parametrize("point", [[1.0], [1.0, 0.0, 0.0]])
def test_joint_point_of_wrong_length_refused(point):
    with pytest.raises(ValueError, match=r"`point_i` has shape \(\d,\), but body 0 \(RigidBar2D\) takes .* \(2,\)"):
        fj.System([fj.RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, point, None, [0.0, 0.0])])
    with pytest.raises(ValueError, match="point_j .* shape"):
        fj.System([fj.RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, [0.0, 0.0], None, point)])
    with pytest.raises(ValueError, match=r"SpringDamper\).*`point_i` has shape"):
        fj.System([fj.RigidBar2D(1.0, 1.0)], [], [fj.SpringDamper(0, point, None, [0.0, 0.0], 10.0)])


# -- 5. inertia tensors no body can have ------------------------------------------------
@pytest.mark.parametrize(
    ("inertia", "com", "match"),
    [
        ([1.0, 1.0, 3.0], (0.0, 0.0, 0.0), r"triangle inequality I1 \+ I2 >= I3 \(2 < 3\)"),
        ([[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], (0.0, 0.0, 0.0), "must be symmetric"),
        ([1.0, 1.0, -1.0], (0.0, 0.0, 0.0), "principal moments of `inertia` must be positive"),
        ([1.0, 1.0, 1.0], (np.nan, 0.0, 0.0), "`com` must be finite"),
    ],
)
def test_rigid_body_3d_refuses_impossible_inertia(inertia, com, match):
    with pytest.raises(ValueError, match=match):
        fj.RigidBody3D(1.0, inertia, com)
    fj.RigidBody3D(1.0, [1.0, 1.0, 2.0])  # a thin plate: I1 + I2 = I3 is allowed


# -- 6. batch chunk checksums -------------------------------------------------------------
def test_swapped_or_corrupted_chunk_named_with_the_way_out(tmp_path):
    fn = lambda x: jnp.sin(x) * 2.0
    xs = jnp.linspace(0.0, 1.0, 6)
    ref = run_batch(fn, xs, chunk_size=2, out_dir=tmp_path, devices=jax.local_devices()[:1])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert sorted(manifest["checksums"]) == ["chunk_00000.npz", "chunk_00001.npz", "chunk_00002.npz"]
    a, b = tmp_path / "chunk_00000.npz", tmp_path / "chunk_00001.npz"
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    with pytest.raises(
        ValueError, match=r"chunk_00000.npz does not match the SHA-256 checksum .* delete .*chunk_00000"
    ):
        run_batch(fn, xs, chunk_size=2, out_dir=tmp_path, devices=jax.local_devices()[:1])
    a.write_bytes(da[:40])  # truncated
    b.write_bytes(db)
    with pytest.raises(ValueError, match="chunk_00000.npz does not match"):
        run_batch(fn, xs, chunk_size=2, out_dir=tmp_path, devices=jax.local_devices()[:1])
    a.unlink()  # the way out: the chunk is computed again
    again = run_batch(fn, xs, chunk_size=2, out_dir=tmp_path, devices=jax.local_devices()[:1])
    np.testing.assert_array_equal(np.asarray(again), np.asarray(ref))


# -- 7. kinetic="exact" of the modal beam: an order effect, not a coding defect -----------
def test_exact_kinetic_energy_overstates_the_pin_rotation_coupling():
    r"""k = 0: the first mode turns the beam about its pin, $w_2 = x\varphi$. A rotation
    couples to the hub through $I_b = \int\rho A x^2$ at any angle; the second-order
    field $[x(1 - \varphi^2/2), x\varphi]$ under the exact kinetic energy gives
    $I_b(1 + \varphi^2/2)$, the paper's truncation $I_b$ (docs/flfj.md)."""
    from flexjax.bodies.modal_beam import ModalHubBeam

    rho_a, length = 0.024662, 1.0
    ib = rho_a * length**3 / 3
    coupling = eqx.filter_jit(lambda b, q: b.mass_matrix(q)[0, 1])
    for kinetic in ("paper", "exact"):
        beam = ModalHubBeam(0.002, length, rho_a, 6.5e5, 0.16258, 0.0, n_axial=0, n_transverse=2, kinetic=kinetic)
        slope = float(beam.deformation(jnp.array([0.0, 1.0, 0.0]), jnp.array([length]))[0, 1]) / length
        for phi in (0.1, 0.4):
            expected = 1.0 if kinetic == "paper" else 1 + phi**2 / 2
            c = float(coupling(beam, jnp.array([0.0, phi / slope, 0.0])))
            assert abs(c / slope / ib - expected) < 1e-9


# -- NaN and inf in a model: refused at construction ------------------------------------
def test_non_finite_model_parameters_refused_at_construction():
    with pytest.raises(ValueError, match=r"RigidBar2D: `com` must be finite"):
        fj.RigidBar2D(1.0, 1.0, com=(np.nan, 0.0))
    with pytest.raises(ValueError, match=r"RevoluteJoint: `point_i` must be finite"):
        fj.RevoluteJoint(0, (np.inf, 0.0), None, (0.0, 0.0))
    with pytest.raises(ValueError, match=r"SpringDamper: `stiffness` must be finite"):
        fj.SpringDamper(0, (0.0, 0.0), None, (0.0, 0.0), np.nan)
    with pytest.raises(ValueError, match=r"GeneralizedAlpha: .*finite rtol and atol, got .*rtol=nan"):
        fj.GeneralizedAlpha(rtol=float("nan"))
    # a NaN put into an element after its construction is caught by the assembly
    bar = eqx.tree_at(lambda b: b.inertia, fj.RigidBar2D(1.0, 1.0), jnp.array(jnp.nan))
    with pytest.raises(ValueError, match=r"body 0 \(RigidBar2D\) has a NaN or infinite `inertia`"):
        fj.System([bar])


# -- argument errors before anything compiles ----------------------------------------------
def test_bad_run_arguments_refused_in_plain_words(user_facing_checks):
    system, q0 = pendulum()
    v0 = jnp.zeros(4)
    cases = [
        (dict(t1=math.inf, dt=1e-3), r"`t1` must be a finite time"),
        (dict(t1=1.0, dt=1e-3, save_every=2.5), r"`save_every` must be an integer >= 1, got 2.5"),
        (dict(t1=1.0, dt=-1e-3), r"`dt` must be a positive, finite step"),
        (dict(t1=1e9, dt=1e-3), r"1e\+12 saved instants .* more than this machine's memory"),
    ]
    for kw, match in cases:
        with pytest.raises(ValueError, match=match):
            fj.simulate(system, q0, v0, **kw)
    ode_cases = [
        (dict(ts=jnp.array([0.0, 2.0])), r"save times `ts` must lie in \[t0, t1\] = \[0.0, 1.0\]"),
        (dict(dt0=-0.1), r"`dt0` must be a positive, finite step"),
        (dict(rtol=float("nan")), r"`rtol` must be positive and finite"),
        (dict(dt0=1e-9, rtol=None), r"take 1e\+09 steps, more than max_steps"),
    ]
    for kw, match in ode_cases:
        with pytest.raises(ValueError, match=match):
            fj.simulate_ode(system, q0, v0, 1.0, **kw)


def test_x64_switched_off_after_import_is_named():
    system, q0 = pendulum()
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(RuntimeError, match="jax_enable_x64 is off"):
            fj.simulate(system, q0, jnp.zeros(4), 0.1, 1e-2)
        with pytest.raises(RuntimeError, match="jax_enable_x64 is off"):
            fj.simulate_ode(system, q0, jnp.zeros(4), 0.1)
    finally:
        jax.config.update("jax_enable_x64", True)


# -- failure messages name time, residual and cause ------------------------------------------
def test_failure_messages_name_the_detected_cause():
    t = np.linspace(0.0, 0.5, 6)
    q = np.zeros((6, 2))
    q[4:] = np.nan
    nan_run = hand_trajectory(q, np.zeros((6, 1)), np.zeros(6), t, RESULTS.newton_failed, 0.4, 40)
    with pytest.raises(SolverError, match=r"at step 40 \(t = 0.4 s\).*NaN or infinite from t = 0.4 s"):
        check_result(nan_run)
    drift = hand_trajectory(np.zeros((6, 2)), np.zeros((6, 1)), 1e-12 * 1e3 ** np.arange(6), t, RESULTS.ode_failed, 0.5)
    with pytest.raises(SolverError, match=r"at t = 0.5 s; last finite max \|Phi\| = 1.000e\+03.*drift diverges"):
        check_result(drift)
    f32 = hand_trajectory(
        np.zeros((6, 2)), np.zeros((6, 1)), np.zeros(6), t, RESULTS.newton_failed, 0.2, 2, dtype=np.float32
    )
    with pytest.raises(SolverError, match="float32 is active"):
        check_result(f32)
    plain = hand_trajectory(np.zeros((6, 2)), np.zeros((6, 1)), np.zeros(6), t, RESULTS.newton_failed, 0.2, 2)
    with pytest.raises(SolverError, match="No specific cause found .* reduce the step size"):
        check_result(plain)
    # with the system, a rank-deficient Phi_q at the last finite state is named
    system, q0 = linkage()
    rank = hand_trajectory(np.tile(np.asarray(q0), (6, 1)), np.zeros((6, 16)), np.zeros(6), t, RESULTS.ode_failed, 0.3)
    with pytest.raises(SolverError, match="Phi_q has rank 15 of its 16 rows"):
        check_result(rank, system)


def test_static_failure_names_the_cause():
    # a free particle under gravity has no equilibrium: the iterate runs away
    with pytest.raises(
        SolverError, match=r"load step 1 of 1 .*likely cause: the Newton iterate became NaN or infinite"
    ):
        fj.solve_static(particle(), jnp.zeros(2), 1, max_iter=3)


# -- gradients through simulate_contact ---------------------------------------------------------
def test_simulate_contact_gradient_names_first_contact():
    sys_, contact = particle(), floor()
    f = lambda h: simulate_contact(sys_, contact, jnp.stack([0.0, h]), jnp.zeros(2), 0.5).q[-1, 1]
    with pytest.raises(NotImplementedError, match="not differentiable .* use flexjax.contact.first_contact"):
        jax.grad(f)(1.0)
    with pytest.raises(NotImplementedError, match="first_contact"):
        jax.vmap(f)(jnp.array([1.0, 2.0]))


# -- silent repairs are visible ----------------------------------------------------------------
def test_projection_and_inconsistent_start_warn_with_amounts():
    system, q0 = pendulum()
    bad = q0.at[2].add(0.05)
    with pytest.warns(ConsistencyWarning, match=r"initial positions q0 .* moved them by up to \d\.\d+e-02"):
        check_dae_start(system, fj.GeneralizedAlpha(), bad, jnp.zeros(4), 0.0, True)
    with pytest.warns(ConsistencyWarning, match=r"consistent=False, but .*max \|Phi\| = 4\.\d+e-02"):
        check_dae_start(system, fj.GeneralizedAlpha(), bad, jnp.zeros(4), 0.0, False)
    with pytest.warns(ConsistencyWarning, match="System.consistent_state: the initial positions q0"):
        system.consistent_state(bad, jnp.zeros(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a consistent start: no warning
        check_dae_start(system, fj.GeneralizedAlpha(), q0, jnp.zeros(4), 0.0, False)
        system.consistent_state(q0, jnp.zeros(4))


# -- CLI: no stale summary ---------------------------------------------------------------------
def test_rerun_removes_the_previous_summary_first(tmp_path, monkeypatch):
    from flexjax import experiments
    from flexjax.cli import main

    def failing(out_dir, quick, progress):
        raise RuntimeError("interrupted")

    monkeypatch.setitem(experiments.EXPERIMENTS, "stub", experiments.Experiment("stub", "a stub", failing))
    (tmp_path / "stub").mkdir()
    (tmp_path / "stub" / "summary.json").write_text('{"old": 1.0}\n')
    with pytest.raises(RuntimeError, match="interrupted"):
        main(["run", "stub", "--out", tmp_path])
    assert not (tmp_path / "stub" / "summary.json").exists()
    monkeypatch.setitem(
        experiments.EXPERIMENTS, "stub", experiments.Experiment("stub", "a stub", lambda *a: {"x": 2.0})
    )
    assert main(["run", "stub", "--out", tmp_path]) == 0
    assert json.loads((tmp_path / "stub" / "summary.json").read_text()) == {"x": 2.0}
    assert not list((tmp_path / "stub").glob("*.tmp"))
