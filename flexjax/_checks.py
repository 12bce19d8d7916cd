"""Construction-time checks that name the problem (STYLE.md section 7).

Values can be tracers when a module is built inside `jit`/`vmap`; then only shapes are
checked and value checks are skipped (they cannot be evaluated at trace time).
"""

import jax
import jax.numpy as jnp
import numpy as np


def is_concrete(x) -> bool:
    """True when `x` holds actual numbers (not a tracer under jit/vmap/grad)."""
    return not isinstance(x, jax.core.Tracer)


def check_shape(owner: str, name: str, x, shape: tuple[int, ...]) -> None:
    """Raise `ValueError` unless `jnp.shape(x) == shape`."""
    if jnp.shape(x) != shape:
        raise ValueError(
            f"{owner}: `{name}` must have shape {shape}, got {jnp.shape(x)}."
        )


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
