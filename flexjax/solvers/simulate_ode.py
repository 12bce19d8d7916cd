r"""Adaptive integration of the ODE forms (`Baumgarte`, `UdwadiaKalaba`) with diffrax."""

import contextlib
import math

import diffrax
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import optimistix as optx

from .._checks import check_initial_state, check_ode_arguments, check_output_size, check_outputs, is_concrete
from .._diagnose import check_start
from .._emitter import forward_jit
from .._gc import gc_paused
from .._structural import structural
from ..bodies.modal_beam import with_roots_checked
from ..results import RESULTS
from ..system import CONSISTENT_MAX_ITER, System, _project, check_projection
from ..trajectory import Trajectory, check_result
from .ode_forms import AbstractODEForm, Baumgarte
from .simulate import _diagnostics


def _vector_field(t, y, args):
    system, form, _ = args  # the third: `checked`, see `_solve`
    q, v = y
    qdd, _ = form.acceleration(system, q, v, t)
    return v, qdd


# the messages of diffrax's checks of the save times and of dt0, which
# `check_ode_arguments` makes in Python on concrete arguments
_DIFFRAX_CHECKS = ("saveat.ts must", "Must have (t1 - t0) * dt0 >= 0")


@contextlib.contextmanager
def _diffrax_checks_compiled_out(checked: bool):
    """Trace diffrax without its checks of the save times and of `dt0` when `checked`.

    diffrax makes them with `eqx.error_if` on the (traced) times: a host callback, and JAX
    never writes a program with one to its persistent compilation cache. `checked` is a
    static argument of `_solve`, true only when `check_ode_arguments` has made the same
    checks in Python on concrete values. (`equinox.internal.error_if`, which diffrax
    calls, is replaced for the duration of the trace; other checks pass through.)"""
    if not checked:
        yield
        return
    original = eqxi.error_if

    def error_if(x, pred, msg, *args, **kwargs):
        if isinstance(msg, str) and msg.startswith(_DIFFRAX_CHECKS):
            return x
        return original(x, pred, msg, *args, **kwargs)

    eqxi.error_if = error_if
    try:
        yield
    finally:
        eqxi.error_if = original


@forward_jit
def _solve(
    checked,
    system,
    form,
    solver,
    q0,
    v0,
    t0,
    t1,
    ts,
    dt0,
    controller,
    max_steps,
    event_fn,
    adjoint,
    outputs,
    consistent,
):
    """The run as one program. `checked` (static): the times were checked in Python
    before compiling, and diffrax is traced without its checks of them."""
    res = (jnp.zeros((), q0.dtype), jnp.zeros((), q0.dtype))
    if consistent:  # projection in the same compiled program (System.consistent_state)
        q0, v0, *res = _project(system, q0, v0, t0, CONSISTENT_MAX_ITER)
    event = None
    if event_fn is not None:
        event = diffrax.Event(
            cond_fn=lambda t, y, args, **kw: event_fn(t, y[0], y[1], args[0]),
            root_finder=optx.Newton(rtol=1e-12, atol=1e-12),
        )
    with _diffrax_checks_compiled_out(checked):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(_vector_field),
            solver,
            t0,
            t1,
            dt0,
            (q0, v0),
            # `checked` (static) in diffrax's arguments: its jitted `diffeqsolve` keeps the
            # traces with and without its checks apart
            args=(system, form, checked),
            saveat=diffrax.SaveAt(subs=[diffrax.SubSaveAt(ts=ts), diffrax.SubSaveAt(t1=True)]),
            stepsize_controller=controller,
            max_steps=max_steps,
            event=event,
            adjoint=adjoint,
            throw=False,
        )
    (q, v), t_saved, t_end = sol.ys[0], sol.ts[0], sol.ts[1][0]  # t_end: final or event time
    ok = (sol.result == diffrax.RESULTS.successful) | (sol.result == diffrax.RESULTS.event_occurred)
    # a fixed-step run never rejects a step: a diverged (NaN) state still ends "successfully"
    # in diffrax, so a non-finite saved state or final state is a failure here
    saved = jnp.isfinite(t_saved)
    bad_row = saved & ~(jnp.isfinite(q).all(axis=1) & jnp.isfinite(v).all(axis=1))
    end_bad = ~(jnp.isfinite(sol.ys[1][0][0]).all() & jnp.isfinite(sol.ys[1][1][0]).all())
    diverged = bad_row.any() | end_bad
    t_fail = jnp.where(ok & bad_row.any(), t_saved[jnp.argmax(bad_row)], t_end)
    ok = ok & ~diverged
    # rows after an event are inf (diffrax); diagnostics are computed on finite rows only
    finite = jnp.isfinite(t_saved)
    qs = jnp.where(finite[:, None], q, q0[None])
    vs = jnp.where(finite[:, None], v, v0[None])
    tt = jnp.where(finite, t_saved, t0)
    qdd, lam = jax.vmap(lambda a, b, c: form.acceleration(system, a, b, c))(qs, vs, tt)
    energy, res_q, res_v = _diagnostics(system, tt, qs, vs)
    mask = lambda x: jnp.where(finite.reshape((-1,) + (1,) * (x.ndim - 1)), x, jnp.inf)
    out = None if outputs is None else jax.tree_util.tree_map(mask, jax.vmap(outputs)(tt, qs, vs))
    return Trajectory(
        t=t_saved,
        q=q,
        v=v,
        a=mask(qdd),
        lam=mask(lam),
        energy=mask(energy),
        constraint_residual=mask(res_q),
        velocity_residual=mask(res_v),
        result=RESULTS.where(ok, RESULTS.successful, RESULTS.ode_failed),
        failed_step=jnp.array(-1),
        failed_time=jnp.where(ok, jnp.nan, t_fail),
        failed_residual=jnp.array(0.0),
        newton_iterations=jnp.zeros(t_saved.shape, int),
        event_time=jnp.where(sol.result == diffrax.RESULTS.event_occurred, t_end, jnp.inf),
        force_state=jnp.zeros((t_saved.shape[0], 0)),
        outputs=out,
    ), tuple(res)


@gc_paused
def simulate_ode(
    system: System,
    q0,
    v0,
    t1: float,
    *,
    form: AbstractODEForm | None = None,
    solver: diffrax.AbstractSolver | None = None,
    t0: float = 0.0,
    ts=None,
    dt0: float | None = None,
    rtol: float | None = 1e-8,
    atol: float | None = 1e-10,
    max_steps: int = 100_000,
    event=None,
    adjoint: diffrax.AbstractAdjoint | None = None,
    consistent: bool = True,
    throw: bool = True,
    outputs=None,
) -> Trajectory:
    r"""Integrate `system` in ODE form with a diffrax solver (adaptive by default).

    **Arguments:**

    - `form`: an `AbstractODEForm`: `Baumgarte(alpha, beta)` (default,
      $\alpha = \beta = 0$) or `UdwadiaKalaba(alpha, beta)`.
    - `solver`: any diffrax solver (default `diffrax.Tsit5()`).
    - `ts`: save times (default 201 points from `t0` to `t1`).
    - `dt0`: initial step; with `rtol`/`atol` a PID controller adapts the step. Pass
      `rtol=None` for fixed steps of `dt0` (e.g. classic RK4 in seed 003).
    - `event`: `event(t, q, v, system) -> scalar`; the run stops where it crosses zero
      (located by a Newton root find); `Trajectory.event_time` holds that time.
    - `adjoint`: diffrax adjoint for reverse-mode gradients (default recursive
      checkpointing; with fixed steps one checkpoint per step, which gives gradients
      exact to round-off, where diffrax's default binomial schedule was measured up to
      1.6e-4 off on a 1838-step run).
    - `consistent`, `throw`, `outputs`: as in `simulate` (`outputs` is evaluated at
      the save times `ts`; rows after an event hold `inf`).
    """
    form = Baumgarte() if form is None else form
    if not isinstance(form, AbstractODEForm):
        raise ValueError(
            f"simulate_ode: `form` must be an AbstractODEForm (Baumgarte or UdwadiaKalaba), got {type(form).__name__}."
        )
    solver = diffrax.Tsit5() if solver is None else solver
    if system.stateful_forces:
        k = system.stateful_forces[0]
        raise NotImplementedError(
            f"simulate_ode: force element {k} ({type(system.force_elements[k]).__name__}) has a discrete "
            "state advanced once per step; integrate this system with the fixed-step `simulate`."
        )
    q0, v0 = check_initial_state("simulate_ode", system.nq, q0, v0)
    check_outputs("simulate_ode", outputs)
    system, form, event, outputs = structural((system, form, event, outputs))  # equal models share programs
    system = with_roots_checked(system)  # here, not in the program (a host callback)
    if rtol is None and dt0 is None:
        raise ValueError("simulate_ode: fixed-step integration (rtol=None) needs dt0.")
    ts = check_ode_arguments("simulate_ode", system, t0, t1, ts, dt0, rtol, atol, max_steps)
    # the augmented matrix of the Baumgarte form is singular with redundant constraints; a
    # start consistent to rounding with concrete inputs needs no projection in the program
    exact, _ = check_start(
        "simulate_ode",
        system,
        q0,
        v0,
        t0,
        consistent=consistent,
        need_full_rank=isinstance(form, Baumgarte),
        remedy="Use form=UdwadiaKalaba(...), which handles redundant constraints.",
    )
    project = consistent and not exact
    # times checked in Python when concrete (check_ode_arguments): then not in the program
    checked = all(is_concrete(x) for x in (t0, t1, ts, dt0))
    ts = jnp.linspace(t0, t1, 201) if ts is None else ts
    if rtol is None:
        controller = diffrax.ConstantStepSize()
    else:
        controller = diffrax.PIDController(rtol=rtol, atol=atol)
    if adjoint is None and rtol is None:
        # one checkpoint per step: with fewer (diffrax's default, from max_steps) the
        # reverse pass of long fixed-step runs came out up to 1.6e-4 off the finite
        # differences (flfj_tune, 1838 Tsit5 steps, diffrax 0.7.2); storing every step is exact
        nsteps = math.ceil(float(t1 - t0) / float(dt0) - 1e-9)
        check_output_size("simulate_ode", nsteps, 2 * system.nq, "pass an adjoint with fewer checkpoints")
        adjoint = diffrax.RecursiveCheckpointAdjoint(checkpoints=max(nsteps, 1) + 1)
    adjoint = diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
    traj, res = _solve(
        checked,
        system,
        form,
        solver,
        q0,
        v0,
        jnp.asarray(t0, float),
        jnp.asarray(t1, float),
        ts,
        dt0,
        controller,
        max_steps,
        event,
        adjoint,
        outputs,
        project,
    )
    if project:
        traj = check_projection(traj, *res)
    return check_result(traj, system) if throw else traj
