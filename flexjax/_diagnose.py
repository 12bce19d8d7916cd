r"""Checks of a run's start and causes of a failed run, in Python on concrete numbers.

Nothing here is traced into the compiled step loop: `check_start` runs once before a
simulation compiles (the constraints and their Jacobian at the initial state, through
one small compiled function), and `failure_causes` reads a finished `Trajectory` when
a failure is reported.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import ConsistencyWarning, warn_if_moved
from ._emitter import forward_jit, nothing_traced
from .results import RESULTS, code
from .system import linearized_constraints

START_TOL = 1e-6  # largest accepted |Phi|, |Phi_q v + Phi_t| of an unprojected start (same scale)
# a start whose residuals are below this (relative, as START_TOL) is consistent to rounding:
# projecting it would move it by rounding only
ROUNDING_TOL = 64 * float(np.finfo(np.float64).eps)
RANK_RTOL = 1e-9  # singular values of Phi_q below this fraction of the largest count as zero
LAMBDA_LARGE = 1e12  # multipliers (N, N m) beyond this mean a (near) singular Newton matrix
DRIFT_GROWTH = 1e3  # growth of the constraint residual that counts as a diverging drift


@forward_jit
def _start_residuals(system, q, v, t):
    r"""$\Phi$, $\Phi_q$ and the velocity residuals at one state, from one batch of
    forward-mode derivatives of $\Phi(q, t)$ (the cheapest program to compile)."""
    Phi, J, Phi_t = linearized_constraints(system, q, t)
    return Phi, J, jnp.concatenate([J @ v + Phi_t, system.nonholonomic(q, v, t)])


def _rank(J) -> tuple[int, np.ndarray]:
    """Numerical rank of `J` and its singular values."""
    if J.size == 0:
        return 0, np.zeros(0)
    s = np.linalg.svd(J, compute_uv=False)
    return int(np.sum(s > RANK_RTOL * s[0])), s


def dependent_rows(J, r: int) -> list[int]:
    """Rows of `J` left out of a set of `r` independent rows picked by a column-pivoted
    QR factorization of `J^T` (one choice among possibly many)."""
    import scipy.linalg

    _, _, piv = scipy.linalg.qr(J.T, mode="economic", pivoting=True)
    return sorted(int(i) for i in piv[r:])


def redundancy_message(owner: str, system, J, t) -> str | None:
    """Sentence naming redundant constraints when `J` (the constraint Jacobian) is rank
    deficient, else `None`."""
    r, s = _rank(J)
    m = J.shape[0]
    if r >= m:
        return None
    rows = dependent_rows(J, r)
    why = (
        f"more rows than the {J.shape[1]} coordinates"
        if r == len(s)
        else f"singular value {s[r]:.3e} against the largest {s[0]:.3e}"
    )
    listed = ", ".join(str(i) for i in rows[:8]) + (", ..." if len(rows) > 8 else "")
    return (
        f"{owner}: the constraints are redundant: Phi_q has rank {r} of its {m} rows at t = {float(t):.6g} s "
        f"({why}; {'row' if len(rows) == 1 else 'rows'} {listed} "
        f"{'depends' if len(rows) == 1 else 'depend'} on the others), so the Newton matrix is singular and the "
        "multipliers and motion come out wrong"
    )


def check_start(
    owner: str,
    system,
    q0,
    v0,
    t0,
    *,
    consistent: bool,
    need_full_rank: bool,
    remedy: str = "",
    warn_move: bool = True,
    stacklevel: int = 3,
) -> tuple[bool, np.ndarray | None]:
    """Checks of the initial state, before anything compiles; a no-op under a transformation.
    Returns whether the state is known to satisfy the constraints to rounding
    (`ROUNDING_TOL`; True without constraints, False when not concrete) and $\Phi_q$ at
    `q0, t0` as computed for the checks (None without constraints or when not concrete),
    which a program that starts from `q0` unprojected need not form again.

    - `consistent`: warn (`ConsistencyWarning`) when the projection onto the constraints
      will move `q0` or `v0` by more than `MOVE_TOL` (relative); with `False`, warn when the
      unprojected start violates them by more than `START_TOL`.
    - `need_full_rank`: raise `ValueError` when $\\Phi_q$ is rank deficient at the
      (projected) initial state; `remedy` is appended to the message.
    """
    if system.nconstraints + system.nvelocity_constraints == 0:
        return True, None
    if not nothing_traced((system, q0, v0, t0)):  # arrays and the model's closures
        return False, None
    t = jnp.asarray(t0, float)
    q, v = np.asarray(q0, float), np.asarray(v0, float)
    start = _start_residuals(system, jnp.asarray(q), jnp.asarray(v), t)
    if not nothing_traced(start):  # traced values the walk above cannot see (an object's attribute)
        return False, None
    Phi, J, res_v = (np.asarray(x) for x in start)
    J0 = J
    scale_q, scale_v = max(1.0, float(np.max(np.abs(q)))), max(1.0, float(np.max(np.abs(v))))
    # velocity rows Phi_q v + Phi_t round like |Phi_q| |v|
    scale_rows = scale_v * max(1.0, float(np.max(np.abs(J), initial=0.0)))
    exact = (
        float(np.max(np.abs(Phi), initial=0.0)) <= ROUNDING_TOL * scale_q
        and float(np.max(np.abs(res_v), initial=0.0)) <= ROUNDING_TOL * scale_rows
    )
    if consistent and system.nconstraints:
        # Gauss-Newton to the nearest consistent point (as the projection does), in numpy
        for _ in range(20):
            if not np.max(np.abs(Phi), initial=0.0) > 1e-12 * scale_q or not np.all(np.isfinite(J)):
                break  # converged, or diverged (the projection itself then reports it)
            q = q - np.linalg.lstsq(J, Phi, rcond=None)[0]
            Phi, J, res_v = (np.asarray(x) for x in _start_residuals(system, jnp.asarray(q), jnp.asarray(v), t))
        if warn_move:
            v_new = v
            if system.nvelocity_constraints == 0 and np.all(np.isfinite(J)):
                v_new = v - np.linalg.lstsq(J, res_v, rcond=None)[0]
            warn_if_moved(owner, q0, v0, q, v_new, stacklevel=stacklevel + 1)
    elif not consistent:
        bad_q = float(np.max(np.abs(Phi), initial=0.0))
        bad_v = float(np.max(np.abs(res_v), initial=0.0))
        if bad_q > START_TOL * scale_q or bad_v > START_TOL * scale_v:
            warnings.warn(
                f"{owner}: consistent=False, but the initial state violates the constraints "
                f"(max |Phi| = {bad_q:.3e}, max |Phi_q v + Phi_t| = {bad_v:.3e}); the run starts "
                "with a jump (energy and constraint forces). Pass consistent=True or a consistent "
                "q0, v0 (System.consistent_state).",
                ConsistencyWarning,
                stacklevel=stacklevel,
            )
    if need_full_rank and system.nconstraints and np.all(np.isfinite(J)):
        msg = redundancy_message(owner, system, J, t0)
        if msg is not None:
            raise ValueError(f"{msg}. {remedy}".rstrip())
    return exact, J0


def check_dae_start(system, solver, q0, v0, t0, consistent: bool) -> tuple[bool, np.ndarray | None]:
    """`check_start` for `simulate`: generalized-α without `redundant=True` needs
    independent constraint rows (its Newton matrix is singular otherwise). Returns
    whether the start is known to be consistent to rounding, and $\Phi_q$ there."""
    from .solvers.generalized_alpha import GeneralizedAlpha

    full_rank = isinstance(solver, GeneralizedAlpha) and not solver.redundant
    return check_start(
        "simulate",
        system,
        q0,
        v0,
        t0,
        consistent=consistent,
        need_full_rank=full_rank,
        remedy="Pass solver=GeneralizedAlpha(redundant=True) (least-squares Newton steps) or "
        "integrate with simulate_ode(form=UdwadiaKalaba(...)).",
        stacklevel=5,
    )


# -- failure causes ------------------------------------------------------------
def _x64_cause(dtype) -> str | None:
    if not jax.config.jax_enable_x64 or dtype != np.float64:
        return (
            f"float32 is active (jax_enable_x64 is {jax.config.jax_enable_x64}, state dtype {dtype}): "
            "stiff models need float64; do not switch jax_enable_x64 off after importing flexjax"
        )
    return None


def _nan_cause(t, q, v) -> str | None:
    bad = ~(np.isfinite(q).all(axis=1) & np.isfinite(v).all(axis=1)) & np.isfinite(t)
    if not bad.any():
        return None
    k = int(np.argmax(bad))
    last = f"last finite state at t = {t[k - 1]:.6g} s" if k > 0 else "already at the first saved instant"
    return f"the state is NaN or infinite from t = {t[k]:.6g} s on ({last}): the integration diverged"


def _drift_cause(t, res) -> str | None:
    ok = np.isfinite(res) & np.isfinite(t)
    if ok.sum() < 2:
        return None
    tt, rr = t[ok], res[ok]
    k = int(np.argmax(rr))
    start = max(float(rr[0]), 1e-12)
    if rr[k] > DRIFT_GROWTH * start and rr[k] > 1e-6:
        return (
            f"the constraint drift diverges: max |Phi| grew from {rr[0]:.3e} (t = {tt[0]:.6g} s) to "
            f"{rr[k]:.3e} (t = {tt[k]:.6g} s); with Baumgarte terms the stabilization is unstable "
            "at this step (smaller step or gains, see flexjax.analysis.stability)"
        )
    return None


def _multiplier_cause(t, lam) -> str | None:
    if lam.size == 0:
        return None
    big = np.where(np.isfinite(lam), np.abs(lam), 0.0).max(axis=1)
    k = int(np.argmax(big))
    if big[k] > LAMBDA_LARGE:
        return (
            f"the multipliers reach |lambda| = {big[k]:.3e} at t = {t[k]:.6g} s: the Newton matrix is "
            "(nearly) singular, as with redundant constraints (pass GeneralizedAlpha(redundant=True) "
            "or use simulate_ode with UdwadiaKalaba) or a locked mechanism"
        )
    return None


def _rank_cause(system, t, q) -> str | None:
    ok = np.isfinite(q).all(axis=1) & np.isfinite(t)
    if system is None or not ok.any() or system.nconstraints == 0:
        return None
    k = int(np.nonzero(ok)[0][-1])
    J = np.asarray(system.constraints_q(jnp.asarray(q[k]), jnp.asarray(t[k])))
    msg = redundancy_message("", system, J, t[k])
    return None if msg is None else msg.lstrip(": ")


def failure_causes(traj, system=None, up_to: float = np.inf) -> list[str]:
    """Likely causes of a failed concrete run, most specific first, read from the saved
    instants up to `up_to` (the failure time; NaN or inf: all) and the first one after."""
    codes = code(traj.result)
    if np.ndim(codes) > 0:  # a batch: diagnose the first failed run
        k = int(np.argmax(np.ravel(codes) != code(RESULTS.successful)))
        nb = np.ndim(codes)
        traj = jax.tree_util.tree_map(lambda x: np.reshape(np.asarray(x), (-1,) + np.shape(x)[nb:])[k], traj)
    t, q, v = np.asarray(traj.t), np.asarray(traj.q), np.asarray(traj.v)
    n = len(t) if not np.isfinite(up_to) else min(len(t), int(np.searchsorted(t, up_to, side="right")) + 1)
    diverged = [_nan_cause(t[:n], q[:n], v[:n]), _drift_cause(t[:n], np.asarray(traj.constraint_residual)[:n])]
    causes = [_x64_cause(q.dtype)] + diverged
    if not any(diverged):  # in a diverged state, huge multipliers and a lost rank are consequences
        causes.append(_multiplier_cause(t[:n], np.asarray(traj.lam)[:n]))
        try:
            causes.append(_rank_cause(system, t[:n], q[:n]))
        except Exception:  # the diagnosis must never hide the failure it explains
            pass
    return [c for c in causes if c]


def static_failure_causes(system, q0, q, t) -> list[str]:
    """Likely causes of a failed static solve from the guess `q0` and the last iterate `q`."""
    causes = [_x64_cause(np.asarray(q).dtype)]
    if not np.all(np.isfinite(np.asarray(q))):
        causes.append("the Newton iterate became NaN or infinite (an unstable or unloaded free motion, or a NaN load)")
    try:
        causes.append(_rank_cause(system, np.asarray([float(t)]), np.asarray(q0)[None]))
    except Exception:  # the diagnosis must never hide the failure it explains
        pass
    return [c for c in causes if c]
