r"""Fixed-step simulation of a `System` as an index-3 DAE (generalized-α by default).

The run is jit-compiled end to end: `lax.scan` over saved instants, an inner
`lax.scan` over the `save_every` steps between them, `lax.while_loop` for Newton.
With `progress=True` the same compiled chunk is called repeatedly from Python to
drive a progress bar (the numbers are identical).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_initial_state, check_outputs, check_simulate_arguments, is_concrete
from .._diagnose import check_dae_start
from .._emitter import forward_jit, largest_abs, may_be_differentiated
from .._gc import gc_paused
from .._structural import structural
from ..bodies.modal_beam import with_roots_checked
from ..results import RESULTS
from ..system import CONSISTENT_MAX_ITER, System, check_projection, projection
from ..trajectory import Trajectory, check_result
from ._batching import batch_any
from .base import AbstractDAESolver
from .generalized_alpha import GeneralizedAlpha


def _step_count(t0, t1, dt, save_every):
    for name, x in (("t0", t0), ("t1", t1), ("dt", dt)):
        if not isinstance(x, (int, float)) and not (is_concrete(x) and np.ndim(x) == 0):
            raise ValueError(f"simulate: `{name}` fixes the number of steps and must be a Python number.")
    t0, t1, dt = float(t0), float(t1), float(dt)
    if not (dt > 0 and math.isfinite(dt)):
        raise ValueError(f"simulate: `dt` must be positive and finite, got {dt}.")
    if not t1 > t0:
        raise ValueError(f"simulate: need t1 > t0, got t0={t0}, t1={t1}.")
    n = round((t1 - t0) / dt)
    if abs(n * dt - (t1 - t0)) > 1e-9 * max(1.0, abs(t1 - t0)):
        raise ValueError(f"simulate: (t1 - t0) / dt = {(t1 - t0) / dt} must be an integer number of steps.")
    if save_every < 1 or n % save_every:
        raise ValueError(f"simulate: save_every={save_every} must divide the number of steps {n}.")
    return n


def flat_states(states, dtype):
    """Force-element states raveled into one vector (`Trajectory.force_state` rows)."""
    return jnp.concatenate([jnp.ravel(z) for z in states] + [jnp.zeros((0,), dtype)])


CHECKPOINT_BYTES = 2**26  # stored step linearizations above which "auto" checkpoints


def _use_checkpoint(checkpoint, nsteps: int, system) -> bool:
    if checkpoint not in (True, False, "auto"):
        raise ValueError(f"simulate: `checkpoint` must be True, False or 'auto', got {checkpoint!r}.")
    if checkpoint != "auto":
        return checkpoint
    return nsteps * (system.nq + system.nconstraints) ** 2 * 8 > CHECKPOINT_BYTES


def _batched(tree) -> bool:
    """True when an array of `tree` is batched by a `vmap` that encloses this call (seen
    through the tracers of differentiation). Under `jax.vmap(jax.jit(f))` the batch is
    not visible here; the run is then treated as a single one, which is only slower."""

    def batched(x):
        while isinstance(x, jax.core.Tracer):
            if type(x).__name__ == "BatchTracer":
                return True
            x = getattr(x, "primal", None)  # a JVP tracer: look at its primal
        return False

    return any(batched(x) for x in jax.tree_util.tree_leaves(tree))


def _largest_divisor_at_most(n, k):
    return max(d for d in range(1, min(n, k) + 1) if n % d == 0)


def checkpointed_scan(f, carry, xs):
    r"""`lax.scan(f, carry, xs)` whose reverse-mode memory grows like $\sqrt n$, not $n$.

    The $n$ steps are split into blocks of $b \approx \sqrt n$ (the largest divisor of
    $n$ not above $\lceil\sqrt n\rceil$); each block is a `jax.checkpoint`ed inner scan.
    The backward pass keeps only the carry at block boundaries and recomputes one block
    at a time, so it stores $n/b + b$ states instead of $n$ step linearizations, for one
    extra forward evaluation of the steps. Plain forward runs are unaffected.
    """
    n = xs.shape[0]
    block = _largest_divisor_at_most(n, math.isqrt(n - 1) + 1 if n > 1 else 1)
    if block in (1, n):
        return jax.lax.scan(f, carry, xs)
    inner = jax.checkpoint(lambda c, x: jax.lax.scan(f, c, x))
    carry, ys = jax.lax.scan(inner, carry, xs.reshape(n // block, block))
    return carry, jax.tree_util.tree_map(lambda y: y.reshape((n,) + y.shape[2:]), ys)


def _advance(system, solver, state, fail, t0, h, first_step, nsave: int, save_every: int, checkpoint: bool, outputs):
    """Advance `nsave * save_every` steps; returns the state, failure record, saves.

    A run whose step has failed stops there: the state that step ended with (its last
    Newton iterate, which the failure diagnosis reads) is held for every later step.
    Under `vmap` the other samples go on: the failed ones are passed to the solver as
    not `healthy`, so that they take no part in its batch-wide decisions, their states
    are kept by a `where`, and when no sample is left the steps are skipped
    (`batch_any`), as they are for a single run after its failure. When the samples'
    results depend on each other (`solver.couples_samples`, a Newton matrix shared by
    the batch), a step in which a sample failed is taken again with `coupled=False`
    (every sample on its own): until it failed, the failing sample took part in that
    step's shared matrices, and the others may have failed or been thrown off with it.
    Then only a sample that fails on its own is marked failed, and a failing sample
    never changes another sample's result.
    """
    scan = checkpointed_scan if checkpoint else jax.lax.scan

    def one_step(carry, k):
        state, fail = carry
        step = first_step + k
        t = t0 + step * h
        healthy = fail[0] < 0

        def take(c, coupled):  # one attempt, if it is due, for the samples still running
            result, due = c

            def attempt():
                new, info = solver.step(system, t, h, state, healthy, coupled)
                return new, (info.converged, info.error, info.iterations)

            tried = jax.lax.cond(due, attempt, lambda: result)
            held_info = jax.tree_util.tree_map(lambda a, b: jnp.where(healthy, a, b), tried[1], result[1])
            result = (result[0].held(healthy, tried[0]), held_info)
            return (result, batch_any(~result[1][0], healthy)), None

        held = (state, (jnp.ones((), bool), jnp.zeros((), fail[2].dtype), jnp.zeros((), int)))
        start = (held, batch_any(healthy))
        if solver.couples_samples:  # the scan traces the step once, for both attempts
            (result, _), _ = jax.lax.scan(take, start, jnp.array([True, False]))
        else:
            (result, _), _ = take(start, True)
        new, (converged, error, iterations) = result
        first = healthy & ~converged
        fail = (
            jnp.where(first, step + 1, fail[0]),
            jnp.where(first, t + h, fail[1]),
            jnp.where(first, error, fail[2]),
        )
        return (new, fail), jnp.where(healthy, iterations, 0)

    def one_save(carry, j):
        carry, iters = scan(one_step, carry, j * save_every + jnp.arange(save_every))
        st = carry[0]
        out = None if outputs is None else outputs(t0 + (first_step + (j + 1) * save_every) * h, st.q, st.v)
        return carry, (st.q, st.v, st.qdd, st.lam, jnp.max(iters), flat_states(st.z, st.q.dtype), out)

    (state, fail), saves = scan(one_save, (state, fail), jnp.arange(nsave))
    return state, fail, saves


_run_chunk = forward_jit(_advance)


def _start(system, solver, q0, v0, t0, consistent: bool, Phi_q):
    """Projected initial state (with the projection's residuals) and the solver's state.
    `Phi_q`: $\Phi_q(q_0, t_0)$ from the start checks, for a start taken as it is (one
    linearization of the constraints fewer in the program), or None."""
    if not consistent:
        return q0, v0, (jnp.zeros((), q0.dtype),) * 2, solver.init(system, t0, q0, v0, Phi_q=Phi_q)
    q0, v0, res_q, res_v, Phi_q = projection(system, q0, v0, t0, CONSISTENT_MAX_ITER)
    return q0, v0, (res_q, res_v), solver.init(system, t0, q0, v0, Phi_q=Phi_q)


def _assemble(system, q0, v0, init, fail, saves, t0, h, save_every: int, outputs):
    """The `Trajectory`: the initial instant, then the saved ones, with diagnostics."""
    q, v, a, lam, iters, z, out = saves
    q = jnp.concatenate([q0[None], q])
    v = jnp.concatenate([v0[None], v])
    a = jnp.concatenate([init.qdd[None], a])
    lam = jnp.concatenate([init.lam[None], lam])
    iters = jnp.concatenate([jnp.zeros((1,), iters.dtype), iters])
    z = jnp.concatenate([flat_states(system.force_states(), q.dtype)[None], z])
    if outputs is not None:
        first = outputs(t0, q0, v0)
        out = jax.tree_util.tree_map(lambda x0, xs: jnp.concatenate([jnp.asarray(x0)[None], xs]), first, out)
    t = t0 + h * save_every * jnp.arange(q.shape[0])
    energy, res_q, res_v = _diagnostics(system, t, q, v)
    return Trajectory(
        t=t,
        q=q,
        v=v,
        a=a,
        lam=lam,
        energy=energy,
        constraint_residual=res_q,
        velocity_residual=res_v,
        result=RESULTS.where(fail[0] >= 0, RESULTS.newton_failed, RESULTS.successful),
        failed_step=fail[0],
        failed_time=fail[1],
        failed_residual=fail[2],
        newton_iterations=iters,
        event_time=jnp.array(jnp.inf),
        force_state=z,
        outputs=out,
    )


def _no_failure(dtype):
    # explicit dtypes: weakly typed scalars here would make a second chunk recompile
    return (jnp.array(-1, dtype=int), jnp.array(jnp.nan, dtype=dtype), jnp.array(0.0, dtype=dtype))


@forward_jit
def _whole_run(
    system,
    solver,
    q0,
    v0,
    t0,
    h,
    nsave: int,
    save_every: int,
    consistent: bool,
    checkpoint: bool,
    outputs,
    dense: bool,
    Phi_q,
):
    """The whole of `simulate` as one compiled program: projection, initial
    accelerations, the step loop, diagnostics and outputs. With `dense`, a constant
    mass matrix is formed once for the run (`System._with_dense_mass`)."""
    system = system._with_dense_mass() if dense else system
    q0, v0, res, init = _start(system, solver, q0, v0, t0, consistent, Phi_q)
    first = jnp.zeros((), int)
    _, fail, saves = _advance(
        system, solver, init, _no_failure(q0.dtype), t0, h, first, nsave, save_every, checkpoint, outputs
    )
    return _assemble(system, q0, v0, init, fail, saves, t0, h, save_every, outputs), res


_start_jit = forward_jit(_start)
_with_dense_mass_jit = forward_jit(lambda system: system._with_dense_mass())
_assemble_jit = forward_jit(_assemble)


def _chunked_run(system, solver, q0, v0, t0, h, nsave, save_every, consistent, checkpoint, outputs, dense, Phi_q, n):
    """`_whole_run` split into compiled chunks called from Python, to drive a progress bar."""
    from tqdm.auto import tqdm

    system = _with_dense_mass_jit(system) if dense else system
    q0, v0, res, init = _start_jit(system, solver, q0, v0, t0, consistent, Phi_q)
    nchunks = _largest_divisor_at_most(nsave, 50)
    per_chunk = nsave // nchunks
    state, fail, chunks = init, _no_failure(q0.dtype), []
    with tqdm(total=n, unit="step", desc="generalized-alpha", leave=False) as bar:
        for c in range(nchunks):
            first = jnp.array(c * per_chunk * save_every, dtype=int)
            state, fail, saves = _run_chunk(
                system, solver, state, fail, t0, h, first, per_chunk, save_every, checkpoint, outputs
            )
            chunks.append(saves)
            bar.update(per_chunk * save_every)
    saves = jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs), *chunks)
    return _assemble_jit(system, q0, v0, init, fail, saves, t0, h, save_every, outputs), res


def _diagnostics(system, t, q, v):
    """Energy, position and velocity constraint residuals at each saved instant."""

    def residuals(q, v, t):  # Phi and its time derivative from one JVP (one trace)
        Phi, Phi_dot = jax.jvp(system.constraints, (q, t), (v, jnp.ones_like(t)))
        return largest_abs(Phi), largest_abs(jnp.concatenate([Phi_dot, system.nonholonomic(q, v, t)]))

    e = jax.vmap(system.energy)(q, v, t)
    res_q, res_v = jax.vmap(residuals)(q, v, t.astype(q.dtype))
    return e, res_q, res_v


@gc_paused
def simulate(
    system: System,
    q0,
    v0,
    t1: float,
    dt: float,
    *,
    solver: AbstractDAESolver | None = None,
    t0: float = 0.0,
    save_every: int = 1,
    consistent: bool = True,
    throw: bool = True,
    progress: bool = False,
    checkpoint: bool | str = "auto",
    outputs=None,
) -> Trajectory:
    r"""Integrate `system` from `t0` to `t1` with fixed step `dt`.

    The projection, initial accelerations, step loop and diagnostics form one compiled
    program, cached per model structure and argument shapes: a model rebuilt with
    equal structure (even with its own freshly defined lambdas, see
    `flexjax._structural`) or with other parameter values reuses it.

    **Arguments:**

    - `system`: the assembled `System`.
    - `q0`, `v0`: initial coordinates and velocities, shape `(system.nq,)`.
    - `t1`, `dt`, `t0`: end time, step, start time (s; Python numbers, they fix the
      number of steps, which must be an integer).
    - `solver`: an `AbstractDAESolver`, default `GeneralizedAlpha()` ($\rho_\infty = 0.9$).
    - `save_every`: keep every k-th step (must divide the step count).
    - `consistent`: first project `q0, v0` onto the position and velocity constraints
      (`System.consistent_state`, raises if that fails). A start with concrete values
      that satisfies them to rounding already (residuals below `ROUNDING_TOL` of
      `flexjax._diagnose`, relative; as the models' start-state helpers give) is taken
      as it is, and the compiled program leaves the projection out; under `jit`,
      `grad` or `vmap` it is always projected, so derivatives see the projection.
    - `throw`: raise `SolverError` naming step, time and residual if a Newton solve
      fails; with `False` the failure is recorded in the trajectory (for `vmap` and
      optimisation loops).
    - `progress`: show a progress bar (runs the compiled loop in chunks).
    - `checkpoint`: for reverse-mode gradients, `True` recomputes the steps in blocks
      of about $\sqrt n$ (`checkpointed_scan`) so that memory grows like $\sqrt n$
      instead of $n$ step linearizations, for about twice the gradient time and a
      larger compiled program; `False` stores every step's linearization (fastest for
      short runs). `"auto"` (default) checkpoints when the stored linearizations
      could be large (more than `CHECKPOINT_BYTES`, estimated as steps times
      $(n_q + m)^2$ floats). Values and gradients are the same either way, and a run
      whose inputs are all concrete (or only batched by `vmap`) cannot be
      differentiated and never compiles the checkpointed loop.
    - `outputs`: optional `fn(t, q, v) -> pytree` (for example `flexjax.outputs` helpers
      or any function or module), evaluated at every saved instant inside the compiled
      run; the results are stacked along a leading axis in `Trajectory.outputs`.
      Differentiable like the rest of the trajectory.

    **Returns:** a `Trajectory` with `1 + nsteps/save_every` saved instants (the first
    is the initial state).
    """
    solver = GeneralizedAlpha() if solver is None else solver
    if system.velocity_constraints:
        raise NotImplementedError(
            "simulate: the index-3 solver handles position constraints only; integrate systems with "
            "nonholonomic (velocity) constraints with simulate_ode (Udwadia-Kalaba or Baumgarte form)."
        )
    check_simulate_arguments(system, t0, t1, dt, save_every)  # plain-words refusals before compiling
    n = _step_count(t0, t1, dt, save_every)
    q0, v0 = check_initial_state("simulate", system.nq, q0, v0)
    check_outputs("simulate", outputs)
    system, outputs = structural((system, outputs))  # equal models share compiled programs
    system = with_roots_checked(system)  # here, not in the program (a host callback)
    # redundant constraints, repaired or bad start; a start consistent to rounding with
    # concrete inputs (a run that cannot be differentiated) needs no projection in the program
    exact, Phi_q = check_dae_start(system, solver, q0, v0, t0, consistent)
    project = consistent and not exact
    t0a, h = jnp.asarray(t0, float), jnp.asarray(dt, float)
    checkpoint = _use_checkpoint(checkpoint, n, system) and may_be_differentiated((system, solver, q0, v0, outputs))
    # one dense product with a constant mass matrix pays in a single run (fewer kernels
    # per Newton iteration) but not in a batch, where the per-body products vectorize
    dense = not _batched((system, solver, q0, v0, outputs))
    Phi_q = None if project or Phi_q is None else jnp.asarray(Phi_q, q0.dtype)  # computed on numbers: not a tracer
    args = (system, solver, q0, v0, t0a, h, n // save_every, save_every, project, checkpoint, outputs, dense, Phi_q)
    if progress:
        traj, res = _chunked_run(*args, n)
    else:
        traj, res = _whole_run(*args)
    if project:
        traj = check_projection(traj, *res)
    return check_result(traj, system) if throw else traj
