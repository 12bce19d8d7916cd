"""Programs that cannot be differentiated compile with XLA's older CPU emitter
(`flexjax._emitter`, a shorter compile); every program that can be differentiated keeps
XLA's default, whose kernels round an expression computed twice the same way (the
derivative of `jnp.max` compares bit for bit). Results agree to rounding."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax._emitter import forward_jit, may_be_differentiated, older_emitter_available
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

pytestmark = pytest.mark.skipif(not older_emitter_available(), reason="this jaxlib lacks the option")


def scatter_add(x, i, y):
    return x.at[i].add(y)


ARGS = (jnp.zeros(10), jnp.array([1, 2, 3]), jnp.ones(3))


def is_older(program, *args) -> bool:
    """XLA's older emitter expands a scatter into a while loop; its fusion emitters
    emit one kernel."""
    return " while(" in program.lower(*args).compile().compiled.as_text()


def test_concrete_and_vmapped_calls_use_the_older_emitter_traced_ones_the_default():
    f = forward_jit(scatter_add)
    assert is_older(f.program(*ARGS), *ARGS)
    chosen = []

    def record(x):
        chosen.append(f.program(x, *ARGS[1:]))
        return f(x, *ARGS[1:])

    jax.vmap(record)(jnp.zeros((2, 10)))
    jax.grad(lambda x: jnp.sum(record(x)))(ARGS[0])
    jax.jit(record)(ARGS[0])
    jax.jvp(record, (ARGS[0],), (ARGS[0],))
    older, default = f.program(*ARGS), chosen[1]
    assert chosen == [older, default, default, default]
    assert not is_older(default, *ARGS)
    np.testing.assert_array_equal(f(*ARGS), [0, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    assert not may_be_differentiated((1.0, np.ones(2), ARGS))


def test_a_function_closing_over_a_traced_value_gets_the_default():
    """`outputs=lambda t, q, v: p * q` with `p` differentiated: the program is
    differentiated through the closure, so it keeps XLA's default emitter."""
    f = forward_jit(lambda g, x: g(x))
    chosen = []

    def loss(p):
        g = lambda x: p * x
        chosen.append(f.program(g, ARGS[0]))
        return jnp.sum(f(g, ARGS[0] + 1.0))

    assert float(jax.grad(loss)(2.0)) == 10.0
    older = f.program(lambda x: 2.0 * x, ARGS[0])  # a concrete closure
    assert chosen[0] is not older and f.program(jnp.sin, ARGS[0]) is older


def test_forward_run_equals_the_default_emitters_run_to_rounding():
    """The flexible slider-crank (ANCF rod, driven crank) as a plain call (older emitter)
    and inside `jit` (default emitter, and the start projected in the program)."""
    system = flexible_slider_crank(omega=150.0)
    q0, v0 = flexible_slider_crank_state(system)
    run = lambda q0: fj.simulate(system, q0, v0, 0.01, 1e-4, save_every=10).q
    plain, jitted = run(q0), jax.jit(run)(q0)
    assert float(jnp.max(jnp.abs(plain[-1] - plain[0]))) > 1e-2  # it moved
    np.testing.assert_allclose(plain, jitted, rtol=0, atol=1e-12)
