"""jit and vmap: a compiled or batched run equals the eager Python loop."""

import jax
import jax.numpy as jnp
import numpy as np

import flexjax as fj

from .test_gradients import Q0, spring_pendulum


def run_ga(k):
    return fj.simulate(spring_pendulum(k), Q0, jnp.zeros(4), 0.2, 1e-3, save_every=50, consistent=False, throw=False)


def run_ode(k):
    return fj.simulate_ode(
        spring_pendulum(k),
        Q0,
        jnp.zeros(4),
        0.2,
        form=fj.UdwadiaKalaba(5.0, 5.0),
        ts=jnp.linspace(0, 0.2, 5),
        consistent=False,
        throw=False,
    )


KS = jnp.array([1.0, 5.0, 20.0])


def test_compiled_run_equals_op_by_op_run():
    # simulate is compiled as a whole; with jit disabled every operation (and every Newton
    # and step loop, as Python loops) runs eagerly: an independent execution of the model
    short = lambda k: fj.simulate(spring_pendulum(k), Q0, jnp.zeros(4), 0.005, 1e-3, consistent=False)
    jitted = jax.jit(short)(5.0)
    with jax.disable_jit():
        eager = short(5.0)
    assert np.allclose(jitted.q, eager.q, rtol=0, atol=1e-12)
    assert bool(jitted.succeeded) and bool(eager.succeeded)


def test_vmap_equals_loop_generalized_alpha():
    batch = jax.vmap(run_ga)(KS)
    for i, k in enumerate(KS):
        single = run_ga(float(k))
        assert np.allclose(batch.q[i], single.q, rtol=0, atol=1e-13)
        assert np.allclose(batch.energy[i], single.energy, rtol=0, atol=1e-12)
    assert batch.q.shape == (3, 5, 4)
    assert not np.allclose(batch.q[0, -1], batch.q[2, -1])  # the samples differ


def test_vmap_equals_loop_ode():
    batch = jax.vmap(run_ode)(KS)
    for i, k in enumerate(KS):
        assert np.allclose(batch.q[i], run_ode(float(k)).q, rtol=0, atol=1e-10)


def test_vmap_over_solver_parameter():
    def final(rho):
        tr = fj.simulate(
            spring_pendulum(5.0),
            Q0,
            jnp.zeros(4),
            0.2,
            1e-2,
            save_every=20,
            solver=fj.GeneralizedAlpha(rho_inf=rho),
            consistent=False,
            throw=False,
        )
        return tr.q[-1]

    rhos = jnp.array([0.0, 0.5, 1.0])
    batch = jax.vmap(final)(rhos)
    for i, r in enumerate(rhos):
        assert np.allclose(batch[i], final(float(r)), atol=1e-13)


def test_throw_inside_jit_raises_runtime_error():
    import pytest

    solver = fj.GeneralizedAlpha(max_iter=1)

    @jax.jit
    def f(k):
        return fj.simulate(spring_pendulum(k), Q0, jnp.zeros(4), 0.2, 0.1, solver=solver, consistent=False).q

    with pytest.raises(Exception, match="simulation failed"):
        jax.block_until_ready(f(5.0))


def test_trajectory_save_load_and_plots(tmp_path):
    tr = run_ga(5.0)
    path = tr.save(tmp_path / "run.npz")
    back = fj.Trajectory.load(path)
    assert np.array_equal(back.q, tr.q) and np.array_equal(back.energy, tr.energy)
    png = tr.plot(tmp_path / "q.png", indices=[2, 3])
    diag = tr.plot_diagnostics(tmp_path / "diag.png")
    for p in (png, diag):
        with open(p, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
