"""Construction-time checks that name the problem (STYLE.md section 7).

Values can be tracers when a module is built inside `jit`/`vmap`; then only shapes are
checked and value checks are skipped (they cannot be evaluated at trace time).
"""

import numbers
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np


def is_concrete(x) -> bool:
    """True when `x` holds actual numbers (not a tracer under jit/vmap/grad)."""
    return not isinstance(x, jax.core.Tracer)


def known_value(x):
    """The numbers of `x`, read through `grad`, `jvp` and `linearize` (their tracers
    carry the undifferentiated value as `primal`), or None under `jit` or `vmap`."""
    while isinstance(x, jax.core.Tracer) and hasattr(x, "primal"):
        x = x.primal
    return None if isinstance(x, jax.core.Tracer) else x


def known_values(tree):
    """`tree` with each traced leaf replaced by its `known_value`: after a run under
    `jax.grad` on numbers (`flexjax._emitter.reverse_call`), the numbers a failure
    message reads."""
    return jax.tree_util.tree_map(known_value, tree)


def check_shape(owner: str, name: str, x, shape: tuple[int, ...]) -> None:
    """Raise `ValueError` unless `jnp.shape(x) == shape`."""
    if jnp.shape(x) != shape:
        raise ValueError(f"{owner}: `{name}` must have shape {shape}, got {jnp.shape(x)}.")


def check_positive(owner: str, name: str, x) -> None:
    """Raise `ValueError` when a concrete `x` has a non-positive or non-finite entry."""
    if is_concrete(x):
        a = np.asarray(x)
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f"{owner}: `{name}` must be positive and finite, got {a}.")


def check_finite(owner: str, name: str, x) -> None:
    """Raise `ValueError` when a concrete `x` has a NaN or infinite entry."""
    if is_concrete(x) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(f"{owner}: `{name}` must be finite, got {np.asarray(x)}.")


def check_attachment_point(owner: str, name: str, point):
    """`point` as a float vector; `ValueError` unless it is one-dimensional and finite."""
    point = jnp.asarray(point, float)
    if point.ndim != 1 or point.shape[0] not in (1, 2, 3):
        raise ValueError(
            f"{owner}: `{name}` must be a vector of 1 to 3 body-frame (or world) coordinates, got shape {point.shape}."
        )
    check_finite(owner, name, point)
    return point


def check_inertia_tensor(owner: str, name: str, inertia) -> None:
    r"""Raise `ValueError` unless a concrete 3x3 `inertia` can belong to a body:
    finite, symmetric, positive principal moments that satisfy the triangle
    inequalities $I_1 + I_2 \ge I_3$ (otherwise the second moment
    $\tfrac12\operatorname{tr}(I)\,1 - I$ has a negative entry and the mass matrix is
    indefinite)."""
    if not is_concrete(inertia):
        return
    a = np.asarray(inertia, float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: `{name}` must be finite, got {a.tolist()}.")
    scale = max(float(np.max(np.abs(a))), np.finfo(float).tiny)
    if np.max(np.abs(a - a.T)) > 1e-9 * scale:
        raise ValueError(
            f"{owner}: `{name}` must be symmetric, got {a.tolist()} (largest asymmetry "
            f"{np.max(np.abs(a - a.T)):.3e}); pass the tensor about the centre of mass in body axes."
        )
    moments = np.linalg.eigvalsh(0.5 * (a + a.T))
    if np.any(moments <= 0):
        raise ValueError(f"{owner}: the principal moments of `{name}` must be positive, got {moments.tolist()}.")
    if moments[0] + moments[1] < moments[2] * (1 - 1e-9):
        raise ValueError(
            f"{owner}: the principal moments of `{name}` {moments.tolist()} violate the triangle "
            f"inequality I1 + I2 >= I3 ({moments[0] + moments[1]:.6g} < {moments[2]:.6g}); no mass "
            "distribution has them and the mass matrix would be indefinite. Check the tensor "
            "(units, about the centre of mass)."
        )


def check_points(system) -> None:
    """Raise `ValueError` when an attachment point of a joint or force element of the
    assembled `system` is not finite or has a length other than its body's
    `point_size` (a short point would be read past its end, a long one truncated)."""
    elements = [("joint", k, e) for k, e in enumerate(system.joints + system.velocity_constraints)]
    elements += [("force element", k, e) for k, e in enumerate(system.force_elements)]
    for kind, k, e in elements:
        for body_name, point_name in (("body_i", "point_i"), ("body_j", "point_j"), ("body", "point")):
            point = getattr(e, point_name, None)
            if point is None or not hasattr(e, body_name) or not hasattr(point, "shape"):
                continue
            owner = f"System: {kind} {k} ({type(e).__name__})"
            check_finite(owner, point_name, point)
            idx = getattr(e, body_name)
            if idx is None:
                continue
            body = system.bodies[idx]
            if body.point_size is not None and jnp.shape(point) != (body.point_size,):
                raise ValueError(
                    f"{owner}: `{point_name}` has shape {jnp.shape(point)}, but body {idx} "
                    f"({type(body).__name__}) takes body-frame points of shape ({body.point_size},); "
                    f"give all {body.point_size} coordinates."
                )


def check_finite_leaves(system) -> None:
    """Raise `ValueError` naming the element and field of the first concrete NaN or
    infinite parameter of `system` (bodies, joints, force elements)."""
    groups = (
        ("body", system.bodies),
        ("joint", system.joints + system.velocity_constraints),
        ("force element", system.force_elements),
    )
    for kind, elements in groups:
        for k, e in enumerate(elements):
            for path, leaf in jax.tree_util.tree_leaves_with_path(e):
                if not (hasattr(leaf, "dtype") and jnp.issubdtype(leaf.dtype, jnp.inexact) and is_concrete(leaf)):
                    continue
                a = np.asarray(leaf)
                if not np.all(np.isfinite(a)):
                    field = jax.tree_util.keystr(path).lstrip(".")
                    raise ValueError(
                        f"System: {kind} {k} ({type(e).__name__}) has a NaN or infinite `{field}`: "
                        f"{a.tolist() if a.size <= 9 else '(array with non-finite entries)'}; every model "
                        "parameter must be finite."
                    )


def safe_norm(x, axis=None):
    """Euclidean norm with a zero (not NaN) gradient at x = 0."""
    sq = jnp.sum(x * x, axis=axis)
    positive = sq > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, sq, 1.0)), 0.0)


def check_initial_state(owner: str, nq: int, q0, v0):
    """Convert `q0, v0` to float arrays; raise `ValueError` on a wrong shape or NaN/inf."""
    q0, v0 = jnp.asarray(q0, float), jnp.asarray(v0, float)
    if jnp.shape(q0) != (nq,) or jnp.shape(v0) != (nq,):
        raise ValueError(f"{owner}: q0 and v0 must have shape ({nq},), got {jnp.shape(q0)} and {jnp.shape(v0)}.")
    if is_concrete(q0) and is_concrete(v0) and not (np.isfinite(q0).all() and np.isfinite(v0).all()):
        raise ValueError(f"{owner}: the initial state q0, v0 contains NaN or inf.")
    return q0, v0


MOVE_TOL = 1e-6  # largest silent change of q0 or v0 by a projection (relative to max(1, |q0|))


class ConsistencyWarning(UserWarning):
    """The initial state was moved onto the constraints, or starts off them."""


def warn_if_moved(owner: str, q0, v0, q, v, stacklevel: int = 3) -> None:
    """`ConsistencyWarning` when concrete `q`, `v` differ from `q0`, `v0` by more than
    `MOVE_TOL` (relative to the larger of 1 and the largest entry)."""
    if not all(is_concrete(x) for x in (q0, v0, q, v)):
        return
    for name, a, b in (("positions q0", q0, q), ("velocities v0", v0, v)):
        a, b = np.asarray(a), np.asarray(b)
        moved = np.abs(b - a)
        if moved.size and np.all(np.isfinite(moved)) and moved.max() > MOVE_TOL * max(1.0, float(np.abs(a).max())):
            k = int(np.argmax(moved))
            warnings.warn(
                f"{owner}: the initial {name} were not consistent with the constraints; the projection "
                f"moved them by up to {moved.max():.3e} (coordinate {k}: {a[k]:.6g} -> {b[k]:.6g}). Pass a "
                "consistent state to silence this.",
                ConsistencyWarning,
                stacklevel=stacklevel,
            )


def check_outputs(owner: str, outputs) -> None:
    """Raise `ValueError` unless `outputs` is `None` or a callable `fn(t, q, v)`."""
    if outputs is not None and not callable(outputs):
        raise ValueError(
            f"{owner}: `outputs` must be a callable fn(t, q, v) -> pytree or None, got {type(outputs).__name__}."
        )


# -- arguments of a run, checked before anything compiles -------------------------
def check_x64(owner: str) -> None:
    """Raise `RuntimeError` when 64-bit floats were switched off after `import flexjax`."""
    if not jax.config.jax_enable_x64:
        raise RuntimeError(
            f"{owner}: jax_enable_x64 is off, so the run would use float32, in which stiff "
            "models fail (Newton does not converge, drift grows). `import flexjax` switches it on; "
            "something switched it off afterwards: call jax.config.update('jax_enable_x64', True)."
        )


def _scalar(owner: str, name: str, x) -> float | None:
    """`x` as a float, `None` for a traced value; `ValueError` for a non-scalar."""
    if not is_concrete(x):
        return None
    if isinstance(x, bool) or np.ndim(x) != 0:
        raise ValueError(f"{owner}: `{name}` must be a real number, got {x!r}.")
    return float(x)


def check_span(owner: str, t0, t1) -> None:
    """`ValueError` unless the concrete times `t0 < t1` are finite numbers."""
    a, b = _scalar(owner, "t0", t0), _scalar(owner, "t1", t1)
    for name, x in (("t0", a), ("t1", b)):
        if x is not None and not np.isfinite(x):
            raise ValueError(f"{owner}: `{name}` must be a finite time (s), got {x}.")
    if a is not None and b is not None and not b > a:
        raise ValueError(f"{owner}: need t1 > t0, got t0={a}, t1={b}.")


def check_step(owner: str, name: str, dt, *, optional: bool = False) -> None:
    """`ValueError` unless the concrete step `dt` is positive and finite (or `None` if optional)."""
    if dt is None and optional:
        return
    x = _scalar(owner, name, dt) if dt is not None else np.nan
    if x is not None and not (np.isfinite(x) and x > 0):
        raise ValueError(f"{owner}: `{name}` must be a positive, finite step (s), got {dt}.")


def check_tolerance(owner: str, name: str, x, *, optional: bool = False) -> None:
    """`ValueError` unless the concrete tolerance `x` is positive and finite."""
    if x is None and optional:
        return
    v = _scalar(owner, name, x) if x is not None else np.nan
    if v is not None and not (np.isfinite(v) and v > 0):
        raise ValueError(f"{owner}: `{name}` must be positive and finite, got {x}.")


def check_count(owner: str, name: str, n) -> None:
    """`ValueError` unless `n` is a Python integer >= 1 (not a float, not a bool)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"{owner}: `{name}` must be an integer >= 1, got {n!r}.")


def memory_bytes() -> int:
    """Physical memory of this machine (bytes); 2**40 where it cannot be read."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 2**40


def check_output_size(owner: str, nrows: float, row_floats: int, fix: str) -> None:
    """`ValueError` when `nrows` saved rows of `row_floats` float64 values would not fit
    in this machine's memory."""
    need = float(nrows) * row_floats * 8
    have = memory_bytes()
    if need > have:
        raise ValueError(
            f"{owner}: the output would hold {float(nrows):.3g} saved instants of {row_floats} numbers, "
            f"{need:.3g} bytes, more than this machine's memory ({have:.3g} bytes); {fix}."
        )


def _row_floats(system) -> int:
    """Numbers stored per saved instant (t, q, v, a, lam, diagnostics)."""
    return 4 * system.nq + system.nconstraints + 8


def check_simulate_arguments(system, t0, t1, dt, save_every) -> None:
    """Arguments of `simulate` that the step count and output size depend on, checked
    before anything compiles."""
    check_x64("simulate")
    check_span("simulate", t0, t1)
    check_step("simulate", "dt", dt)
    check_count("simulate", "save_every", save_every)
    a, b, h = (_scalar("simulate", n, x) for n, x in (("t0", t0), ("t1", t1), ("dt", dt)))
    if None not in (a, b, h):
        check_output_size(
            "simulate", (b - a) / h / save_every, _row_floats(system), "raise save_every or shorten the run"
        )


def check_ode_arguments(owner: str, system, t0, t1, ts, dt0, rtol, atol, max_steps):
    """Arguments of `simulate_ode`, checked before anything compiles; returns `ts` as an
    array (or `None`)."""
    check_x64(owner)
    check_span(owner, t0, t1)
    check_step(owner, "dt0", dt0, optional=True)
    check_tolerance(owner, "rtol", rtol, optional=True)
    check_tolerance(owner, "atol", atol)
    check_count(owner, "max_steps", max_steps)
    if ts is not None:
        ts = jnp.asarray(ts, float)
        if ts.ndim != 1 or ts.shape[0] < 1:
            raise ValueError(f"{owner}: `ts` must be a non-empty 1-D array of save times, got shape {ts.shape}.")
        if is_concrete(ts):
            a, lo, hi = np.asarray(ts), float(t0), float(t1)
            tol = 1e-12 * max(1.0, abs(lo), abs(hi))
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{owner}: `ts` must be finite, got {a}.")
            if a.min() < lo - tol or a.max() > hi + tol:
                raise ValueError(
                    f"{owner}: the save times `ts` must lie in [t0, t1] = [{lo}, {hi}], got values from "
                    f"{a.min()} to {a.max()}; extend t1 or drop the later times."
                )
            if np.any(np.diff(a) < 0):
                raise ValueError(f"{owner}: the save times `ts` must be non-decreasing.")
    nrows = 201 if ts is None else ts.shape[0]
    check_output_size(owner, nrows, _row_floats(system), "save fewer instants")
    if rtol is None and dt0 is not None and is_concrete(t1) and is_concrete(t0):
        nsteps = (float(t1) - float(t0)) / float(dt0)
        if nsteps > max_steps:
            raise ValueError(
                f"{owner}: fixed steps of dt0 = {dt0} from t0 = {float(t0)} to t1 = {float(t1)} take "
                f"{nsteps:.4g} steps, more than max_steps = {max_steps}; raise max_steps or dt0."
            )
    return ts
