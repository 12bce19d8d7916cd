r"""Event-driven simulation of a system with one unilateral frictional contact (seed 004 §2).

The run is a sequence of smooth segments, each integrated by diffrax until a switching
function of its phase crosses zero (`phases` module docstring); diffrax's event
machinery locates the crossing by a Newton root find on the dense output, so switching
instants are resolved to round-off instead of to a step size. At each switch a short
Python step applies the jump (impact map, new stick anchor) and picks the next phase;
the number of switches depends on the data, so this loop is not traced. Every segment
calls the same jit-compiled function (the phase is data, not structure), so a run
compiles once, whatever the number of segments.

A segment also stops after `max_steps` steps without an event; the next one then
continues in the same phase (a chunk, not a switch), so the per-segment output
buffers stay small.
"""

import dataclasses
import pathlib

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .._checks import check_initial_state, check_x64, is_concrete
from .._emitter import forward_jit
from .._gc import gc_paused
from ..results import RESULTS
from ..solvers.ode_forms import Baumgarte
from ..trajectory import SolverError
from .geometry import PointSurfaceContact
from .phases import (
    EVENT_NAMES,
    IMPACT,
    PHASE_NAMES,
    SEPARATION,
    SLIP_NEGATIVE,
    SLIP_POSITIVE,
    STICK,
    Mode,
    candidates,
    classify,
    event_offsets,
    event_values,
    impact,
    mode,
    phase_dynamics,
)


def _vector_field(t, y, args):
    system, contact, stab, md, _ = args
    q, v = y
    return v, phase_dynamics(system, contact, stab, md, q, v, t).qdd


def _event(root_finder, which=(0, 1)):
    def cond(k):
        def fn(t, y, args, **kwargs):
            system, contact, stab, md, offsets = args
            return event_values(system, contact, stab, md, y[0], y[1], t)[k] + offsets[k]

        return fn

    return diffrax.Event(tuple(cond(k) for k in which), root_finder=root_finder, direction=False)


def _controller(rtol, atol):
    return diffrax.ConstantStepSize() if rtol is None else diffrax.PIDController(rtol=rtol, atol=atol)


@forward_jit
def _segment(
    system, contact, stab, md, q0, v0, t0, t1, solver, dt0, rtol, atol, max_steps, root_finder, gap_tol, velocity_tol
):
    """One smooth segment: integrate phase `md` from `t0` until `t1`, an event, or `max_steps`."""
    offsets = event_offsets(event_values(system, contact, stab, md, q0, v0, t0), md, gap_tol, velocity_tol)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_vector_field),
        solver,
        t0,
        t1,
        dt0,
        (q0, v0),
        args=(system, contact, stab, md, offsets),
        saveat=diffrax.SaveAt(steps=True),
        stepsize_controller=_controller(rtol, atol),
        max_steps=max_steps,
        event=_event(root_finder),
        throw=False,
    )
    finite = jnp.isfinite(sol.ts)
    mask = sol.event_mask if sol.event_mask is not None else (False, False)
    return dict(
        t=sol.ts,
        q=sol.ys[0],
        v=sol.ys[1],
        n=jnp.sum(finite),
        event=sol.result == diffrax.RESULTS.event_occurred,
        event_mask=jnp.stack([jnp.asarray(m) for m in mask]),
        result=RESULTS.where(
            (sol.result == diffrax.RESULTS.successful)
            | (sol.result == diffrax.RESULTS.event_occurred)
            | (sol.result == diffrax.RESULTS.max_steps_reached),
            RESULTS.successful,
            RESULTS.ode_failed,
        ),
        steps=sol.stats["num_accepted_steps"],
        rejected=sol.stats["num_rejected_steps"],
    )


@forward_jit
def _rows(system, contact, stab, md, q, v, t):
    """Forces, gaps, energy and constraint residual at saved rows (vmapped over rows and modes)."""

    def row(md, q, v, t):
        ps = phase_dynamics(system, contact, stab, md, q, v, t)
        phi = jnp.concatenate([system.constraints(q, t), md.normal * ps.g[:1], md.tangential * ps.g[1:]])
        return ps.lam_n, ps.lam_t, contact.gaps(system, q), ps.gd, system.energy(q, v, t), jnp.max(jnp.abs(phi))

    return jax.vmap(row)(md, q, v, t)


def _postprocess(system, contact, stab, phase, anchor, q, v, t, chunk=2048):
    """`_rows` over all saved rows in fixed-size chunks (one compilation)."""
    codes = (SEPARATION, STICK, SLIP_POSITIVE, SLIP_NEGATIVE)
    lookup = {f: np.zeros(max(codes) + 1) for f in ("normal", "tangential", "s")}
    for p in codes:
        m = mode(p)
        for f in lookup:
            lookup[f][p] = float(getattr(m, f))
    outs = []
    for a in range(0, t.shape[0], chunk):
        b = min(a + chunk, t.shape[0])
        pad = lambda x, a=a, b=b: jnp.asarray(
            np.concatenate([x[a:b], np.repeat(x[b - 1 : b], chunk - (b - a), axis=0)])
        )
        md = Mode(*(pad(lookup[f][np.asarray(phase, int)]) for f in ("normal", "tangential", "s")), pad(anchor))
        res = _rows(system, contact, stab, md, pad(q), pad(v), pad(t))
        outs.append([np.asarray(r)[: b - a] for r in res])
    return [np.concatenate([o[k] for o in outs]) for k in range(6)]


@forward_jit
def _impact(system, contact, q, v, t):
    out = impact(system, contact, q, v, t)
    # the event stops at g_N = -gap_tol: one Gauss-Newton step puts the point back on the
    # surface (and on the system's constraints), so penetration does not build up over
    # a series of rebounds (a change of order gap_tol in q)
    rows = lambda qq: jnp.concatenate([system.constraints(qq, t), contact.gaps(system, qq)[:1]])
    q_new = q - jnp.linalg.pinv(jax.jacfwd(rows)(q)) @ rows(q)
    return (
        out,
        q_new,
        system.energy(q, v, t),
        system.energy(q_new, out.v, t),
        contact.gap_velocity(system, q_new, out.v),
    )


@forward_jit
def _candidates(system, contact, stab, q, v, t):
    anchor = contact.gaps(system, q)[1]
    return candidates(system, contact, stab, q, v, t, anchor), anchor, system.energy(q, v, t)


@dataclasses.dataclass(frozen=True)
class Switch:
    """One logged switch: `time` (s), phases `before`/`after` (codes of `phases`), the
    `cause` (an `EVENT_NAMES` entry, "impact_map" or "initial"), the total mechanical energy
    just before and after (J) and, for impacts, the impulses `p_n`, `p_t` (N s)."""

    time: float
    before: int
    after: int
    cause: str
    energy_before: float
    energy_after: float
    p_n: float = 0.0
    p_t: float = 0.0

    def __str__(self):
        return f"t = {self.time:.9f} s: {PHASE_NAMES[self.before]} -> {PHASE_NAMES[self.after]} ({self.cause})"


@dataclasses.dataclass(frozen=True)
class ContactSolution:
    r"""Result of `simulate_contact` (NumPy arrays; leading axis: the accepted steps of all
    segments, with both the pre- and post-switch row at each switch).

    - `t` (s), `q`, `v`, `phase` (phase code of the segment a row belongs to).
    - `lam_n`, `lam_t`: contact forces (N; 0 in separation). `g_n`, `g_t`: gaps (m),
      `gd_n`, `gd_t`: their rates (m/s; `gd_t` is the tangential slip velocity).
    - `energy`: total mechanical energy $T + V$ (J). `residual`: largest |constraint| of
      the system's and the active contact rows.
    - `switches`: every switch (`Switch`), in time order.
    - `n_steps`, `n_rejected`: accepted / rejected integrator steps; `n_segments`.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    phase: np.ndarray
    lam_n: np.ndarray
    lam_t: np.ndarray
    g_n: np.ndarray
    g_t: np.ndarray
    gd_n: np.ndarray
    gd_t: np.ndarray
    energy: np.ndarray
    residual: np.ndarray
    switches: tuple[Switch, ...]
    n_steps: int
    n_rejected: int
    n_segments: int

    @property
    def n_events(self) -> int:
        """Number of located switching events (impacts, releases, stick/slip changes)."""
        return sum(1 for s in self.switches if s.cause in EVENT_NAMES)

    @property
    def impacts(self) -> tuple[Switch, ...]:
        """The impact switches (separation -> impact)."""
        return tuple(s for s in self.switches if s.after == IMPACT)

    def save(self, path) -> pathlib.Path:
        """Write the arrays and the switch log (`switch_time`, `switch_before`, ...) to `.npz`."""
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {f.name: np.asarray(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "switches"}
        for f in dataclasses.fields(Switch):
            arrays[f"switch_{f.name}"] = np.asarray([getattr(s, f.name) for s in self.switches])
        np.savez_compressed(path, **arrays)
        return path


def _next_contact_phase(system, contact, stab, q, v, t, velocity_tol, forced_s=None):
    """Pick the phase of a closed contact at `(q, v, t)`; returns `(phase, anchor)`."""
    c, anchor, _ = _candidates(system, contact, stab, q, v, t)
    mu = float(contact.mu)
    if forced_s is None:
        return classify(c, mu, velocity_tol), float(anchor)
    slip_n = float(c.slip_n[0] if forced_s > 0 else c.slip_n[1])
    return (SEPARATION if slip_n < 0 else (SLIP_POSITIVE if forced_s > 0 else SLIP_NEGATIVE)), float(anchor)


@gc_paused
def simulate_contact(
    system,
    contact: PointSurfaceContact,
    q0,
    v0,
    t1: float,
    *,
    t0: float = 0.0,
    stabilization: Baumgarte | None = None,
    solver: diffrax.AbstractSolver | None = None,
    rtol: float | None = 1e-8,
    atol: float = 1e-10,
    dt0: float | None = None,
    root_find: bool = True,
    max_steps: int = 4096,
    max_switches: int = 100_000,
    gap_tol: float = 1e-12,
    velocity_tol: float = 1e-10,
    rebound_velocity: float = 1e-5,
    consistent: bool = True,
    progress: bool = False,
) -> ContactSolution:
    r"""Simulate `system` with the unilateral frictional contact `contact` from `t0` to `t1`.

    **Arguments:**

    - `system`, `contact`: the model; `contact.check(system)` runs first.
    - `q0`, `v0`: initial state; projected onto the system's constraints when `consistent`.
      The initial phase is separation if $g_N > \epsilon_g$ or $\dot g_N > \epsilon_v$,
      otherwise the consistent contact phase (`phases.classify`).
    - `stabilization`: `Baumgarte(alpha, beta)` for every constraint row (default
      $\alpha = \beta = 20$, seed 004).
    - `solver`: diffrax solver (default `Tsit5`); `rtol`, `atol`: PID step control, or
      `rtol=None` for fixed steps of `dt0`.
    - `root_find`: locate switches by a Newton root find (default); `False` stops at the
      end of the step in which a switching function changed sign (fixed-step reference).
    - `max_steps`: steps per segment chunk; `max_switches`: cap on switches.
    - `gap_tol`, `velocity_tol`: $\epsilon_g$ (m), $\epsilon_v$ (m/s) of the switching
      functions; `rebound_velocity`: after an impact with $e > 0$ the contact stays
      closed when $\dot g_N^+$ is below it (m/s), which ends a Zeno series of bounces
      (each rebound is caught $\epsilon_g$ below the surface, a gain of $2 a_N \epsilon_g$ in
      $\dot g_N^2$; keep `rebound_velocity` above $\sqrt{2 a_N \epsilon_g / (1 - e^2)}$).
    - `progress`: print each switch.

    **Returns:** a `ContactSolution`. **Raises:** `ValueError` for bad input (initial
    penetration included), `SolverError` when the integrator fails or the switching
    stalls (many switches without time advancing).
    """
    if not all(is_concrete(x) for x in jax.tree_util.tree_leaves((system, contact, q0, v0, t0, t1, stabilization))):
        # the phase sequence is decided in Python on concrete numbers: nothing to trace
        raise NotImplementedError(
            "simulate_contact is not differentiable and cannot run under jit/vmap/grad (its phase "
            "sequence is decided in Python); for derivatives of the impact time and state use "
            "flexjax.contact.first_contact, a pure differentiable function."
        )
    check_x64("simulate_contact")
    contact.check(system)
    if system.velocity_constraints:
        raise NotImplementedError("simulate_contact: nonholonomic constraints are not supported.")
    q0, v0 = check_initial_state("simulate_contact", system.nq, q0, v0)
    if not float(t1) > float(t0):
        raise ValueError(f"simulate_contact: need t1 > t0, got t0={t0}, t1={t1}.")
    if consistent:
        q0, v0 = system.consistent_state(q0, v0, t0)
    stab = Baumgarte(20.0, 20.0) if stabilization is None else stabilization
    solver = diffrax.Tsit5() if solver is None else solver
    if rtol is None and dt0 is None:
        raise ValueError("simulate_contact: fixed-step integration (rtol=None) needs dt0.")
    root_finder = optx.Newton(rtol=1e-12, atol=1e-9) if root_find else None
    f = lambda x: jnp.asarray(x, float)
    static = dict(
        solver=solver,
        dt0=dt0,
        rtol=rtol,
        atol=atol,
        max_steps=max_steps,
        root_finder=root_finder,
        gap_tol=gap_tol,
        velocity_tol=velocity_tol,
    )

    q, v, t = q0, v0, float(t0)
    g = np.asarray(contact.gaps(system, q))
    gd = np.asarray(contact.gap_velocity(system, q, v))
    if g[0] < -1e3 * gap_tol - 1e-9:
        raise ValueError(f"simulate_contact: the contact point starts {-g[0]:.3e} m inside the surface.")
    if g[0] > gap_tol or gd[0] > velocity_tol:
        phase, anchor = SEPARATION, 0.0
    else:
        phase, anchor = _next_contact_phase(system, contact, stab, q, v, f(t), velocity_tol)
    e0 = float(system.energy(q, v, f(t)))
    switches = [Switch(t, phase, phase, "initial", e0, e0)]
    if progress:
        print(switches[-1])
    rows, n_steps, n_rejected, n_segments, stalled, fresh = [], 0, 0, 0, 0, True

    while t < float(t1):
        md = mode(phase, anchor)
        seg = _segment(system, contact, stab, md, q, v, f(t), f(t1), **static)
        n = int(seg["n"])
        if not bool(seg["result"] == RESULTS.successful):
            raise SolverError(
                f"simulate_contact: the ODE solver failed in phase {PHASE_NAMES[phase]} after t = {t:.9g} s."
            )
        n_segments += 1
        n_steps += int(seg["steps"])
        n_rejected += int(seg["rejected"])
        if n > 0:
            part = {k: np.asarray(seg[k][:n]) for k in ("t", "q", "v")}
            if fresh:  # the segment's initial (post-switch) state is a row too
                part = {k: np.concatenate([np.asarray(x)[None], part[k]]) for k, x in (("t", t), ("q", q), ("v", v))}
            part["phase"], part["anchor"] = np.full(part["t"].shape[0], phase), np.full(part["t"].shape[0], anchor)
            rows.append(part)
            q, v, t_new = seg["q"][n - 1], seg["v"][n - 1], float(seg["t"][n - 1])
        else:
            t_new = t
        stalled = stalled + 1 if t_new - t <= 1e-13 * max(1.0, abs(t)) else 0
        t = t_new
        if stalled > 50 or len(switches) > max_switches:
            raise SolverError(
                f"simulate_contact: switching stalls at t = {t:.9g} s ({len(switches)} switches; last: "
                f"{switches[-1]}); the contact chatters (Zeno) or a phase is inconsistent."
            )
        fresh = bool(seg["event"])
        if not fresh:
            continue  # end of the run or of a chunk (max_steps): same phase
        normal_event = bool(np.asarray(seg["event_mask"])[0])
        if phase == SEPARATION:
            cause = "impact"
        elif normal_event:
            cause = "release"
        elif phase == STICK:  # slide against the stick force that left the cone
            cause = "slip_negative" if float(seg["lam_t"][n - 1]) > 0 else "slip_positive"
        else:
            cause = "reversal"
        before, tt = phase, f(t)
        e_before = float(system.energy(q, v, tt))
        if cause == "impact":
            out, q, e_m, e_p, gd_p = _impact(system, contact, q, v, tt)
            v = out.v
            switches.append(Switch(t, before, IMPACT, cause, float(e_m), float(e_p), float(out.p_n), float(out.p_t)))
            before, e_before = IMPACT, float(e_p)
            if float(gd_p[0]) > rebound_velocity:
                phase, anchor = SEPARATION, 0.0
            else:
                if float(contact.restitution) > 0:  # end of a Zeno series: the last impact is plastic
                    plastic = eqx.tree_at(lambda c: c.restitution, contact, jnp.zeros_like(contact.restitution))
                    v = _impact(system, plastic, q, v, tt)[0].v
                    e_before = float(system.energy(q, v, tt))
                phase, anchor = _next_contact_phase(system, contact, stab, q, v, tt, velocity_tol)
            cause = "impact_map"
        elif cause == "release":
            phase, anchor = SEPARATION, 0.0
        elif cause in ("slip_negative", "slip_positive"):
            phase, anchor = _next_contact_phase(
                system, contact, stab, q, v, tt, velocity_tol, forced_s=-1.0 if cause == "slip_negative" else 1.0
            )
        else:  # reversal of the slip velocity: stick if the cone allows it
            phase, anchor = _next_contact_phase(system, contact, stab, q, v, tt, np.inf)
        switches.append(Switch(t, before, phase, cause, e_before, e_before))
        if progress:
            print(switches[-1])

    cat = lambda k: np.concatenate([r[k] for r in rows])
    t_all, q_all, v_all, ph_all = cat("t"), cat("q"), cat("v"), cat("phase")
    lam_n, lam_t, g_all, gd_all, energy, residual = _postprocess(
        system, contact, stab, ph_all, cat("anchor"), q_all, v_all, t_all
    )
    return ContactSolution(
        t=t_all,
        q=q_all,
        v=v_all,
        phase=ph_all,
        lam_n=lam_n,
        lam_t=lam_t,
        g_n=g_all[:, 0],
        g_t=g_all[:, 1],
        gd_n=gd_all[:, 0],
        gd_t=gd_all[:, 1],
        energy=energy,
        residual=residual,
        switches=tuple(switches),
        n_steps=n_steps,
        n_rejected=n_rejected,
        n_segments=n_segments,
    )


def first_contact(
    system,
    contact: PointSurfaceContact,
    q0,
    v0,
    t1,
    *,
    t0=0.0,
    stabilization: Baumgarte | None = None,
    solver: diffrax.AbstractSolver | None = None,
    rtol: float | None = 1e-10,
    atol: float = 1e-12,
    dt0: float | None = None,
    max_steps: int = 100_000,
    adjoint: diffrax.AbstractAdjoint | None = None,
    throw: bool = True,
    start_tol: float = 1e-9,
):
    r"""Time and state at which a separated contact first closes ($g_N = 0$), differentiable.

    A pure function of its array inputs (no Python control flow on values), so
    `jax.grad`, `jax.jvp` and `jax.vmap` apply; the event time carries its derivative
    through the root find (implicit function theorem). `q0`, `v0` must already be
    consistent with the system's constraints. `adjoint`: diffrax adjoint (default
    recursive checkpointing, for reverse mode; `diffrax.ForwardMode()` for `jax.jvp`,
    cheaper to compile for one or a few parameters).

    `t_c = inf` means only that the contact does not close before `t1`. Two other
    outcomes are flagged: the point starts inside the surface ($g_N < -$`start_tol`, m)
    or the integration gives up (`max_steps` reached, step-size failure) before `t1`.
    With `throw` (default) they raise: `ValueError` or `SolverError` on concrete
    inputs, an `eqx.error_if` error under `jit`/`vmap`; with `throw=False`, `t_c` is
    NaN for them.

    **Returns:** `(t_c, q_c, v_c)`; `t_c = inf` if the contact does not close before `t1`.
    """
    check_x64("first_contact")
    gap0 = contact.normal_gap(system, jnp.asarray(q0, float))
    if throw and is_concrete(gap0) and float(gap0) < -start_tol:
        raise ValueError(
            f"first_contact: the contact point starts {-float(gap0):.3e} m inside the surface "
            f"(g_N = {float(gap0):.3e} m < -start_tol); the first contact is undefined. Start from a "
            "separated state (g_N >= 0)."
        )
    stab = Baumgarte(20.0, 20.0) if stabilization is None else stabilization
    solver = diffrax.Tsit5() if solver is None else solver
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_vector_field),
        solver,
        t0,
        t1,
        dt0,
        (q0, v0),
        args=(system, contact, stab, mode(SEPARATION), jnp.zeros(2)),
        saveat=diffrax.SaveAt(t1=True),
        stepsize_controller=_controller(rtol, atol),
        max_steps=max_steps,
        event=_event(optx.Newton(rtol=1e-13, atol=1e-15), which=(0,)),
        throw=False,
        adjoint=diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint,
    )
    hit = sol.result == diffrax.RESULTS.event_occurred
    inside = gap0 < -start_tol
    gave_up = ~hit & (sol.result != diffrax.RESULTS.successful)
    t_c = jnp.where(hit & ~inside, sol.ts[0], jnp.where(inside | gave_up, jnp.nan, jnp.inf))
    if throw and is_concrete(gave_up):
        if bool(jnp.any(gave_up)):
            raise SolverError(
                f"first_contact: the integration gave up before t1 = {float(jnp.max(jnp.asarray(t1)))} s "
                f"(max_steps = {max_steps} reached or the step size failed) without a contact; the contact "
                "time is unknown, not infinite. Raise max_steps or loosen rtol/atol."
            )
    elif throw:
        t_c = eqx.error_if(t_c, inside, "first_contact: the contact point starts inside the surface (g_N < 0)")
        t_c = RESULTS.contact_not_found.error_if(t_c, gave_up)
    return t_c, sol.ys[0][0], sol.ys[1][0]
