"""Programs that cannot be differentiated compile with XLA's older CPU emitter
(`flexjax._emitter`, a shorter compile), and so do the two programs of a reverse-mode
derivative on numbers unless they compare values with a maximum or minimum (the
derivative of `jnp.max` compares bit for bit, and that emitter may round an expression
computed twice differently); programs traced by `jit` or `jvp` keep XLA's default.
Results agree to rounding."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax._emitter import (
    compares_with_an_extremum,
    forward_jit,
    largest_abs,
    may_be_differentiated,
    older_emitter_available,
    staged,
)
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

pytestmark = pytest.mark.skipif(not older_emitter_available(), reason="this jaxlib lacks the option")


def scatter_add(x, i, y):
    return x.at[i].add(y)


ARGS = (jnp.zeros(10), jnp.array([1, 2, 3]), jnp.ones(3))


def is_older(program, *args) -> bool:
    """XLA's older emitter expands a scatter into a while loop; its fusion emitters
    emit one kernel."""
    return " while(" in program.lower(*args).compile().compiled.as_text()


def test_concrete_vmapped_and_reverse_mode_calls_use_the_older_emitter_traced_ones_the_default():
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
    older, reverse, default = f.program(*ARGS), chosen[1], chosen[2]
    assert chosen == [older, reverse, default, default] and reverse not in (older, default)
    assert not is_older(default, *ARGS)
    (programs,) = f.reverse_programs.values()  # forward with pullback, and the pullback
    assert " while(" in programs["forward"].as_text() and set(programs) == {"forward", "backward"}
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


def test_a_call_on_numbers_inside_a_jit_is_part_of_the_enclosing_program():
    # a jitted function that closes over numbers: the call's inputs are concrete, but it
    # is traced into the enclosing program, which alone may carry compiler options
    # (a nested jit with them raised ValueError)
    f = forward_jit(scatter_add)
    chosen, flags = [], []

    def enclosed():
        chosen.append(f.program(*ARGS))
        flags.append(staged())
        return f(*ARGS)

    np.testing.assert_array_equal(jax.jit(enclosed)(), f(*ARGS))
    assert flags == [True] and not is_older(chosen[0], *ARGS)
    flags.clear()
    jax.vmap(lambda x: flags.append(staged()) or x)(jnp.ones(2))
    jax.grad(lambda x: flags.append(staged()) or x)(1.0)
    assert flags == [False, False] and not staged()
    system = flexible_slider_crank(omega=150.0)
    q0, _ = flexible_slider_crank_state(system)
    inside = jax.jit(lambda: (system.mass(q0), system.constraints(q0, 0.0)))()
    for a, b in zip(inside, (system.mass(q0), system.constraints(q0, 0.0)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    # a loop body and a checkpointed function stage their calls too (each raised before)
    in_scan = jax.lax.scan(lambda c, _: (c, system.mass(q0)), 0.0, None, length=1)[1][0]
    in_checkpoint = jax.checkpoint(lambda x: system.mass(q0) * x)(1.0)
    for a in (in_scan, in_checkpoint):
        np.testing.assert_allclose(a, inside[0], rtol=1e-13, atol=1e-15)


def test_forward_run_equals_the_default_emitters_run_to_rounding():
    """The flexible slider-crank (ANCF rod, driven crank) as a plain call (older emitter)
    and inside `jit` (default emitter, and the start projected in the program)."""
    system = flexible_slider_crank(omega=150.0)
    q0, v0 = flexible_slider_crank_state(system)
    run = lambda q0: fj.simulate(system, q0, v0, 0.01, 1e-4, save_every=10).q
    plain, jitted = run(q0), jax.jit(run)(q0)
    assert float(jnp.max(jnp.abs(plain[-1] - plain[0]))) > 1e-2  # it moved
    np.testing.assert_allclose(plain, jitted, rtol=0, atol=1e-12)


def test_reverse_mode_programs_keep_the_default_where_they_compare_with_a_maximum():
    """A derivative of `jnp.max` compares the entries with the maximum bit for bit: such
    a program keeps XLA's default emitter (no scatter loop), and its gradient is the
    one-hot vector of the largest entry. `largest_abs` (argmax and indexing) compares
    nothing."""
    f = forward_jit(lambda x, i, y: jnp.max(scatter_add(x, i, y) * jnp.arange(10.0)))
    g = jax.grad(lambda x: f(x, *ARGS[1:]))(ARGS[0])
    np.testing.assert_array_equal(g, np.eye(10)[3] * 3.0)  # x + (0, 1, 1, 1, 0, ...) times 0..9: entry 3
    (programs,) = f.reverse_programs.values()
    assert " while(" not in programs["forward"].as_text()
    jvp_jaxpr = lambda fn: jax.make_jaxpr(lambda x: jax.jvp(fn, (x,), (x,)))(jnp.arange(3.0)).jaxpr
    assert compares_with_an_extremum(jvp_jaxpr(jnp.max))
    assert compares_with_an_extremum(jvp_jaxpr(lambda x: jnp.maximum(x, 1.0)))
    assert compares_with_an_extremum(jvp_jaxpr(lambda x: jnp.where(x >= jnp.max(x), x, 0.0)))
    assert not compares_with_an_extremum(jvp_jaxpr(largest_abs))
    assert not compares_with_an_extremum(jvp_jaxpr(jnp.sin))


def test_reverse_mode_gradient_equals_the_jitted_gradient_and_forward_mode_still_works():
    """The same derivative three ways: reverse mode on numbers (the two programs of
    `reverse_call`), inside `jit` (JAX's own transposition, default emitter), and
    forward mode through `jax.linearize` and `jax.jvp` (which a `custom_vjp` would not
    allow: they take XLA's defaults). Compiled once per structure and shapes. A
    Jacobian by `jacrev` equals the one by `jacfwd`."""
    f = forward_jit(lambda x, y: jnp.sum(jnp.sin(x) * y) + jnp.cos(x[0]) ** 2)
    x, y = jnp.linspace(0.1, 1.0, 5), jnp.linspace(2.0, 3.0, 5)
    g = jax.grad(f)(x, y)
    np.testing.assert_allclose(g, jax.jit(jax.grad(f))(x, y), rtol=1e-15, atol=0)
    exact = jnp.cos(x) * y - jnp.zeros(5).at[0].set(jnp.sin(2 * x[0]))
    np.testing.assert_allclose(g, exact, rtol=1e-14, atol=1e-15)
    _, lin = jax.linearize(lambda x: f(x, y), x)
    np.testing.assert_allclose(lin(jnp.ones(5)), jnp.sum(exact), rtol=1e-14)
    np.testing.assert_allclose(jax.jvp(lambda x: f(x, y), (x,), (jnp.ones(5),))[1], jnp.sum(exact), rtol=1e-14)
    jax.grad(f)(x + 1.0, y)  # new values, same shapes: no new program
    assert len(f.reverse_programs) == 1
    # jacrev maps the pullback over a basis of cotangents (XLA's defaults there)
    rows = forward_jit(lambda x: jnp.stack([jnp.sum(jnp.sin(x)), x[0] * x[1]]))
    np.testing.assert_allclose(jax.jacrev(rows)(x), jax.jacfwd(rows)(x), rtol=1e-15, atol=0)


def test_run_batch_chunks_take_the_older_emitter_unless_they_compare_with_a_maximum():
    """`run_batch` compiles `vmap(fn)` with the older emitter, and with XLA's default
    where `fn` differentiates a maximum (its batched gradients stay one-hot)."""
    from flexjax.batch import _compile, run_batch

    samples = jnp.zeros((2, 10))
    leaves, treedef = jax.tree_util.tree_flatten(samples)
    devices = jax.local_devices()[:1]
    plain = lambda x: scatter_add(x, *ARGS[1:])
    peak = lambda x: jax.grad(lambda y: jnp.max(scatter_add(y, *ARGS[1:]) * jnp.arange(10.0)))(x)
    assert " while(" in _compile(plain, leaves, treedef, devices)[0][0].as_text()
    assert " while(" not in _compile(peak, leaves, treedef, devices)[0][0].as_text()
    np.testing.assert_array_equal(run_batch(peak, samples, chunk_size=2), np.tile(np.eye(10)[3] * 3.0, (2, 1)))


def test_a_failed_run_under_grad_raises_a_solver_error_with_its_diagnosis():
    """Under `jax.grad` on numbers the run's result code comes back as a number, so a
    failed Newton step raises the same `SolverError` as a plain call, read from the
    values under the tracers."""
    q0, v0 = fj.models.pendulum_state(0.3)
    solver = fj.GeneralizedAlpha(max_iter=1)
    loss = lambda L: fj.simulate(fj.models.pendulum(length=L), q0, v0, 0.005, 1e-3, consistent=False, solver=solver)
    with pytest.raises(fj.SolverError, match=r"did not converge at step 2 \(t = 0.002 s\): scaled residual"):
        jax.grad(lambda L: loss(L).q[-1, 2])(1.0)


def test_checked_jit_takes_the_older_emitter_unless_the_program_compares_with_a_maximum():
    """`checked_jit` (`tune.minimize`'s loss and gradient): one program per structure
    and shapes, the older emitter without a comparison with an extremum, XLA's default
    with one, and `eqx.filter_jit` under a transformation; values as `jax.jit`."""
    from flexjax._emitter import checked_jit

    plain = checked_jit(jax.value_and_grad(lambda x: jnp.sum(scatter_add(x, *ARGS[1:]) ** 2)))
    peak = checked_jit(jax.grad(lambda x: jnp.max(scatter_add(x, *ARGS[1:]) * jnp.arange(10.0))))
    x = jnp.linspace(0.0, 1.0, 10)
    value, grad = plain(x)
    np.testing.assert_allclose(grad, 2 * scatter_add(x, *ARGS[1:]), rtol=1e-15)
    np.testing.assert_array_equal(peak(x), np.eye(10)[9] * 9.0)
    plain(x + 1.0)
    ((_, older),) = plain.compiled.items()
    ((_, default),) = peak.compiled.items()
    assert " while(" in older.as_text() and " while(" not in default.as_text()
    np.testing.assert_array_equal(jax.vmap(peak)(jnp.stack([x, -x])), [np.eye(10)[9] * 9.0, np.eye(10)[3] * 3.0])
    assert len(peak.compiled) == 1  # the vmapped call took filter_jit's path
