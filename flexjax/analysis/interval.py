r"""Interval uncertainty (seed 002 §5, SPEC "Interval uncertainty").

Parameters $p \in \mathbb R^d$ are known only to lie in a box
$[\underline p, \overline p] = \prod_i [\underline p_i, \overline p_i]$ (an `Interval`).
For any response $y(p)$ (a simulated time history, a scalar) three estimates of its
range over the box are offered:

- **sampling** (`interval_analysis`): evaluate $y$ at N points (uniform random, Latin
  hypercube or a full grid, or explicit samples) as one vmapped batch (`run_batch`) and
  take the elementwise envelopes $\min_k y(p_k)$, $\max_k y(p_k)$ (`envelope`). An inner
  estimate: the true range contains it.
- **vertex method** (`vertex_method`): the $2^d$ corners of the box. Exact when $y$ is
  monotone in each parameter, wrong when an extremum lies inside the box.
- **gradient search** (`extreme_search`): projected Adam (optax) in the normalized box
  $u = (p - \underline p) / (\overline p - \underline p) \in [0, 1]^d$ from several
  starts, for $\max y$ and $\min y$ of a scalar response, gradients through the
  simulation. Finds interior extrema; like any local method it can miss a global one.

`compare` runs all three on one scalar response.
"""

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Float

from .._checks import is_concrete
from .._emitter import checked_jit
from .._gc import gc_paused
from ..batch import BatchInfo, run_batch

SAMPLING_METHODS = ("uniform", "lhs", "grid")


def _bound(name, x):
    if not is_concrete(x):
        raise ValueError(f"Interval: `{name}` must be concrete numbers (build the box outside jit/vmap), got a tracer.")
    a = np.asarray(x, dtype=np.float64)
    if a.ndim > 1:
        raise ValueError(
            f"Interval: `{name}` must be a scalar or a 1-D array (one entry per parameter), got shape {a.shape}."
        )
    return np.atleast_1d(a)


class Interval(eqx.Module):
    r"""A box of uncertain parameters $\prod_i [\underline p_i, \overline p_i]$.

    **Arguments:**

    - `lower`, `upper`: bounds, scalars (one parameter) or 1-D arrays of the same
      length $d \ge 1$, finite, `lower <= upper` (equal bounds fix a parameter).
    - `names`: optional parameter names (for tables), one per parameter.

    **Raises:** `ValueError` for an empty box (no parameters, or `lower > upper`),
    non-finite bounds, mismatched shapes or names.

    The box is a host-side description (NumPy arrays, checked values), not a traced
    quantity; its methods `to_unit`/`from_unit` accept traced arguments.
    """

    lower: Float[np.ndarray, " d"]
    upper: Float[np.ndarray, " d"]
    names: tuple[str, ...] | None = eqx.field(static=True)

    def __init__(self, lower, upper, names=None):
        # values are checked here, not in __check_init__: a box is never built from
        # tracers (it fixes sample counts and vertex counts), so its numbers are known
        lo, hi = _bound("lower", lower), _bound("upper", upper)
        if lo.shape != hi.shape:
            raise ValueError(f"Interval: `lower` and `upper` must have the same shape, got {lo.shape} and {hi.shape}.")
        if lo.size == 0:
            raise ValueError("Interval: the box is empty (no parameters); give at least one [lower, upper] pair.")
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError(f"Interval: bounds must be finite, got lower={lo.tolist()}, upper={hi.tolist()}.")
        bad = np.nonzero(lo > hi)[0]
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"Interval: empty interval for parameter {i}: lower={float(lo[i])} > upper={float(hi[i])}; "
                "swap the bounds (lower <= upper)."
            )
        if names is not None:
            names = tuple(str(s) for s in names)
            if len(names) != lo.size:
                raise ValueError(f"Interval: {len(names)} names for {lo.size} parameters.")
        self.lower, self.upper, self.names = lo, hi, names

    @property
    def ndim(self) -> int:
        """Number of parameters $d$."""
        return int(self.lower.size)

    @property
    def width(self) -> np.ndarray:
        r"""$\overline p - \underline p$."""
        return self.upper - self.lower

    @property
    def center(self) -> np.ndarray:
        r"""$(\underline p + \overline p)/2$."""
        return 0.5 * (self.lower + self.upper)

    def from_unit(self, u):
        r"""Map $u \in [0, 1]^d$ to $p = \underline p + u\,(\overline p - \underline p)$ (traceable)."""
        u = jnp.asarray(u)
        # explicit broadcast: u may carry leading sample axes, (..., d)
        lower, width = (jnp.broadcast_to(jnp.asarray(x), u.shape) for x in (self.lower, self.width))
        return lower + u * width

    def to_unit(self, p):
        r"""Inverse of `from_unit`; a fixed parameter (zero width) maps to 0."""
        p = jnp.asarray(p)
        lower, w = (jnp.broadcast_to(jnp.asarray(x), p.shape) for x in (self.lower, self.width))
        return jnp.where(w > 0, (p - lower) / jnp.where(w > 0, w, 1.0), 0.0)

    def contains(self, p, rtol: float = 1e-12) -> np.ndarray:
        """Boolean per sample (rows of `p`, shape `(N, d)` or `(d,)`): inside the box,
        allowing `rtol` times the width (or 1) for round-off."""
        p = np.asarray(p, dtype=np.float64)
        slack = rtol * np.maximum(self.width, 1.0)
        return np.all((p >= self.lower - slack) & (p <= self.upper + slack), axis=-1)

    def vertices(self) -> Float[np.ndarray, "nv d"]:
        """The $2^d$ corners, rows in binary order (parameter 0 slowest: row k has upper
        bound for parameter i when bit d-1-i of k is set)."""
        bits = np.array(list(itertools.product((0, 1), repeat=self.ndim)), dtype=np.float64)
        return self.lower + bits * self.width

    def sample(self, n, method: str = "lhs", seed: int = 0) -> Float[np.ndarray, "N d"]:
        r"""Sample points of the box.

        **Arguments:**

        - `n`: number of samples for `"uniform"` and `"lhs"`; for `"grid"` the number of
          points per parameter (an int, or one per parameter), so $N = \prod_i n_i$.
        - `method`: `"uniform"` (independent uniform draws), `"lhs"` (Latin hypercube:
          each parameter's range cut into `n` equal strata, one point in each, strata
          paired by random permutations), or `"grid"` (full tensor grid including the
          bounds; one point per axis means the centre).
        - `seed`: NumPy `default_rng` seed (ignored by `"grid"`).

        **Returns:** array `(N, d)`.
        """
        if method not in SAMPLING_METHODS:
            raise ValueError(f"Interval.sample: `method` must be one of {SAMPLING_METHODS}, got {method!r}.")
        d = self.ndim
        if method == "grid":
            counts = np.broadcast_to(np.asarray(n), (d,)) if np.ndim(n) == 0 else np.asarray(n)
            if counts.shape != (d,) or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 1):
                raise ValueError(f"Interval.sample: grid needs a positive integer or {d} of them, got {n!r}.")
            axes = [np.linspace(0.0, 1.0, int(k)) if k > 1 else np.array([0.5]) for k in counts]
            u = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)
            return self.lower + u * self.width
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"Interval.sample: `n` must be a positive integer, got {n!r}.")
        rng = np.random.default_rng(seed)
        if method == "uniform":
            u = rng.random((n, d))
        else:
            strata = np.stack([rng.permutation(n) for _ in range(d)], axis=1)
            u = (strata + rng.random((n, d))) / n
        return self.lower + u * self.width


def check_samples(samples, box: Interval | None = None) -> Float[np.ndarray, "N d"]:
    """Validate explicit parameter samples: shape `(N, d)` (a 1-D array is `N` samples of
    one parameter), `N >= 1`, finite, and inside `box` when one is given.

    **Returns:** the samples as a float64 array. **Raises:** `ValueError`.
    """
    if not is_concrete(samples):
        raise ValueError("check_samples: samples must be concrete arrays, got a tracer.")
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"check_samples: samples must have shape (N, d), got {x.shape}.")
    if x.shape[0] == 0:
        raise ValueError("check_samples: no samples (N = 0); pass at least one row.")
    bad = np.nonzero(~np.all(np.isfinite(x), axis=1))[0]
    if bad.size:
        raise ValueError(f"check_samples: samples contain NaN or inf (rows {bad[:10].tolist()}).")
    if box is not None:
        if x.shape[1] != box.ndim:
            raise ValueError(f"check_samples: samples have {x.shape[1]} parameters, the box has {box.ndim}.")
        out = np.nonzero(~box.contains(x))[0]
        if out.size:
            raise ValueError(
                f"check_samples: {out.size} samples lie outside the box (first: row {int(out[0])} = "
                f"{x[out[0]].tolist()}, box {box.lower.tolist()} .. {box.upper.tolist()})."
            )
    return x


class Envelope(NamedTuple):
    """Elementwise envelopes over the sample axis; each field has the output tree of
    the response without its leading sample axis.

    - `lower`, `upper`: $\\min_k y_k$, $\\max_k y_k$ (e.g. per time instant).
    - `argmin`, `argmax`: the sample index attaining them.
    - `count`: number of samples included (after the `valid` mask).
    """

    lower: Any
    upper: Any
    argmin: Any
    argmax: Any
    count: int


def envelope(outputs, valid=None) -> Envelope:
    """Upper and lower envelopes of any batched output.

    **Arguments:**

    - `outputs`: pytree of arrays with a leading sample axis `N` (what `run_batch`
      returns); envelopes are taken elementwise over the other axes (e.g. time).
    - `valid`: optional boolean `(N,)` mask of the samples to include, e.g.
      `trajectory.succeeded` to leave failed simulations out. Without it every sample
      counts and a NaN in any sample makes that element of the envelope NaN (failures
      are not hidden silently).

    **Returns:** an `Envelope` (NumPy arrays). **Raises:** `ValueError` when no sample
    is included or leading sizes disagree.
    """
    leaves, treedef = jax.tree_util.tree_flatten(outputs)
    leaves = [np.asarray(x) for x in leaves]
    if not leaves:
        raise ValueError("envelope: `outputs` has no array leaves.")
    sizes = {x.shape[0] if x.ndim else 0 for x in leaves}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(
            f"envelope: every output leaf needs the same non-empty leading sample axis, got sizes {sizes}."
        )
    n = sizes.pop()
    index = np.arange(n)
    if valid is not None:
        mask = np.asarray(valid, dtype=bool)
        if mask.shape != (n,):
            raise ValueError(f"envelope: `valid` must have shape ({n},), got {mask.shape}.")
        if not mask.any():
            raise ValueError("envelope: no valid sample (the `valid` mask is all False).")
        leaves, index = [x[mask] for x in leaves], index[mask]
    lo = [np.min(x, axis=0) for x in leaves]
    hi = [np.max(x, axis=0) for x in leaves]
    amin = [index[np.argmin(x, axis=0)] for x in leaves]
    amax = [index[np.argmax(x, axis=0)] for x in leaves]
    un = lambda xs: jax.tree_util.tree_unflatten(treedef, xs)
    return Envelope(un(lo), un(hi), un(amin), un(amax), int(index.size))


class IntervalResult(NamedTuple):
    """Result of `interval_analysis` / `vertex_method`.

    - `samples`: parameter points `(N, d)`; `outputs`: `fn`'s outputs, leading axis N.
    - `envelope`: `Envelope` of the outputs; `info`: `BatchInfo` of the batch run.
    """

    samples: np.ndarray
    outputs: Any
    envelope: Envelope
    info: BatchInfo


def _valid_mask(valid, outputs):
    return None if valid is None else np.asarray(valid(outputs), dtype=bool)


def interval_analysis(
    fn: Callable,
    box: Interval,
    n: int | None = None,
    *,
    samples=None,
    method: str = "lhs",
    seed: int = 0,
    chunk_size: int = 256,
    valid: Callable | None = None,
    out_dir=None,
    progress: bool = False,
    devices=None,
    overwrite: bool = False,
) -> IntervalResult:
    r"""Sampled interval analysis: run `fn` on N parameter points as one batch and
    return the envelopes of its outputs.

    **Arguments:**

    - `fn`: `fn(p) -> pytree of arrays`, `p` a `(d,)` parameter vector; builds the model
      from `p` and simulates it (with `throw=False`).
    - `box`: the `Interval`.
    - `n`, `method`, `seed`: sample count and scheme (`Interval.sample`); or
    - `samples`: explicit `(N, d)` points (checked: finite, inside `box`).
    - `valid`: optional `valid(outputs) -> (N,) bool` selecting the samples that enter
      the envelope (e.g. `lambda out: out["ok"]`).
    - `chunk_size`, `out_dir`, `progress`, `devices`, `overwrite`: passed to `run_batch`.

    **Returns:** `IntervalResult`.
    """
    if not isinstance(box, Interval):
        raise TypeError(f"interval_analysis: `box` must be an Interval, got {type(box).__name__}.")
    if (samples is None) == (n is None):
        raise ValueError("interval_analysis: give either `n` (points to sample) or explicit `samples`, not both.")
    p = box.sample(n, method, seed) if samples is None else check_samples(samples, box)
    outputs, info = run_batch(
        fn,
        p,
        chunk_size=chunk_size,
        out_dir=out_dir,
        progress=progress,
        devices=devices,
        overwrite=overwrite,
        return_info=True,
    )
    return IntervalResult(p, outputs, envelope(outputs, _valid_mask(valid, outputs)), info)


def vertex_method(
    fn: Callable,
    box: Interval,
    *,
    chunk_size: int | None = None,
    valid: Callable | None = None,
    max_vertices: int = 4096,
    **batch_kwargs,
) -> IntervalResult:
    r"""Vertex method: `fn` at all $2^d$ corners of `box` (one batch), and the envelopes.

    Exact bounds for responses monotone in each parameter; an extremum inside the box
    is missed (compare with `extreme_search`).

    **Arguments:** `fn(p)` as in `interval_analysis`; `box`; `chunk_size` (default: all
    corners in one chunk); `valid` as in `interval_analysis`; `max_vertices` guards
    against $2^d$ blowing up; other keywords go to `run_batch`.

    **Returns:** `IntervalResult` with `samples` the corners (`Interval.vertices` order).
    """
    if not isinstance(box, Interval):
        raise TypeError(f"vertex_method: `box` must be an Interval, got {type(box).__name__}.")
    if 2**box.ndim > max_vertices:
        raise ValueError(
            f"vertex_method: {box.ndim} parameters give 2^{box.ndim} = {2**box.ndim} corners > max_vertices="
            f"{max_vertices}; raise max_vertices or use sampling / extreme_search."
        )
    corners = box.vertices()
    chunk = len(corners) if chunk_size is None else chunk_size
    outputs, info = run_batch(fn, corners, chunk_size=chunk, return_info=True, **batch_kwargs)
    return IntervalResult(corners, outputs, envelope(outputs, _valid_mask(valid, outputs)), info)


class ExtremeResult(NamedTuple):
    r"""Result of `extreme_search`.

    - `max`, `argmax`, `min`, `argmin`: best values found and their parameters `(d,)`.
    - `starts`: the starting points `(S, d)` (parameter units).
    - `max_per_start`, `min_per_start`: best value of each start `(S,)` (their spread
      shows whether the starts agree).
    - `max_history`, `min_history`: response value at each step `(steps, S)`.
    - `evaluations`: number of value-and-gradient evaluations.
    """

    max: float
    argmax: np.ndarray
    min: float
    argmin: np.ndarray
    starts: np.ndarray
    max_per_start: np.ndarray
    min_per_start: np.ndarray
    max_history: np.ndarray
    min_history: np.ndarray
    evaluations: int


def default_optimizer(steps: int, learning_rate: float = 0.05) -> optax.GradientTransformation:
    """Adam with a cosine-decayed step (`learning_rate` to 1e-3 of it over `steps`), in
    normalized box units: the decay lets the iterate settle on the extremum instead of
    circling it at the step length."""
    return optax.adam(optax.cosine_decay_schedule(learning_rate, steps, alpha=1e-3))


@gc_paused
def extreme_search(
    scalar_fn: Callable,
    box: Interval,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 200,
    starts: int = 8,
    *,
    seed: int = 0,
) -> ExtremeResult:
    r"""Gradient-based search for $\max_p y(p)$ and $\min_p y(p)$ over `box`.

    Projected descent in the normalized box: $u \leftarrow \mathrm{clip}(u + \Delta u,
    0, 1)$ with $\Delta u$ from `optimizer` applied to $\pm\nabla_u y$, $p =
    \underline p + u(\overline p - \underline p)$. Starts: the box centre, then Latin
    hypercube points (`seed`). All starts and both senses run as one vmapped,
    jit-compiled `lax.scan`. The best value seen along each path is kept. A step
    whose value or gradient is non-finite (e.g. a failed simulation returning NaN) is
    not taken: that start stops there.

    **Arguments:**

    - `scalar_fn`: `scalar_fn(p) -> scalar`, differentiable, `p` of shape `(d,)`.
    - `box`: the `Interval`.
    - `optimizer`: optax transformation; default `default_optimizer(steps)` (Adam,
      cosine decay from 0.05). Its state is created here, never stored.
    - `steps`: updates per start; `starts`: number of starts; `seed`: for the starts.

    **Returns:** `ExtremeResult`. **Raises:** `ValueError` for bad `steps`/`starts`/box.
    """
    if not isinstance(box, Interval):
        raise TypeError(f"extreme_search: `box` must be an Interval, got {type(box).__name__}.")
    for name, k in (("steps", steps), ("starts", starts)):
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"extreme_search: `{name}` must be a positive integer, got {k!r}.")
    optimizer = default_optimizer(steps) if optimizer is None else optimizer
    unit = Interval(np.zeros(box.ndim), np.ones(box.ndim))
    u0 = np.full((1, box.ndim), 0.5)
    if starts > 1:
        u0 = np.concatenate([u0, unit.sample(starts - 1, "lhs", seed)])
    # both senses in one batch: sign +1 minimizes y, -1 maximizes y
    u_all = jnp.asarray(np.concatenate([u0, u0]))
    signs = jnp.concatenate([jnp.ones(starts), -jnp.ones(starts)])
    lower, width = jnp.asarray(box.lower), jnp.asarray(box.width)
    best, best_u, hist = _search(scalar_fn, lower, width, optimizer, steps, u_all, signs)
    best, best_u, hist = np.asarray(best), np.asarray(best_u), np.asarray(hist)
    y = np.asarray(signs) * best  # back to response values
    y_min, y_max = y[:starts], y[starts:]
    # non-finite everywhere means no usable start
    if not (np.any(np.isfinite(y_min)) and np.any(np.isfinite(y_max))):
        raise FloatingPointError("extreme_search: the response was non-finite at every start.")
    i_min = int(np.nanargmin(np.where(np.isfinite(y_min), y_min, np.nan)))
    i_max = int(np.nanargmax(np.where(np.isfinite(y_max), y_max, np.nan)))
    p = lambda u: np.asarray(box.from_unit(u))
    h = np.asarray(signs)[None, :] * hist
    return ExtremeResult(
        max=float(y_max[i_max]),
        argmax=p(best_u[starts + i_max]),
        min=float(y_min[i_min]),
        argmin=p(best_u[i_min]),
        starts=p(u0),
        max_per_start=y_max,
        min_per_start=y_min,
        max_history=h[:, starts:],
        min_history=h[:, :starts],
        evaluations=2 * starts * (steps + 1),
    )


@checked_jit  # XLA's older CPU emitter unless the search compares with a maximum (flexjax._emitter)
def _search(scalar_fn, lower, width, optimizer, steps: int, u_all, signs):

    def one(u0, sign):
        loss = lambda u: sign * scalar_fn(lower + u * width)
        value_and_grad = jax.value_and_grad(loss)

        def body(carry, _):
            u, state, best, best_u = carry
            v, g = value_and_grad(u)
            ok = jnp.isfinite(v) & jnp.all(jnp.isfinite(g))
            better = ok & (v < best)
            best, best_u = jnp.where(better, v, best), jnp.where(better, u, best_u)
            updates, new_state = optimizer.update(jnp.where(ok, g, 0.0), state, u)
            new_u = jnp.clip(optax.apply_updates(u, updates), 0.0, 1.0)
            keep = lambda a, b: jnp.where(ok, a, b)
            return (keep(new_u, u), jax.tree_util.tree_map(keep, new_state, state), best, best_u), v

        init = (u0, optimizer.init(u0), jnp.asarray(jnp.inf, u0.dtype), u0)
        (u, _, best, best_u), hist = jax.lax.scan(body, init, None, length=steps)
        v = loss(u)  # the last iterate has not been evaluated yet
        better = jnp.isfinite(v) & (v < best)
        return jnp.where(better, v, best), jnp.where(better, u, best_u), hist

    return jax.vmap(one, out_axes=(0, 0, 1))(u_all, signs)


def compare(
    scalar_fn: Callable,
    box: Interval,
    n: int = 256,
    *,
    method: str = "lhs",
    seed: int = 0,
    chunk_size: int = 256,
    steps: int = 200,
    starts: int = 8,
    optimizer: optax.GradientTransformation | None = None,
    progress: bool = False,
    devices=None,
) -> dict:
    r"""Range of a scalar response by sampling, by the vertex method and by gradient search.

    The corners and the `n` samples run as one batch (one compilation); non-finite
    values (failed runs, if `scalar_fn` returns NaN for them) are left out and counted.

    **Returns:** a JSON-ready dict: for each of `sampled`, `vertex`, `gradient`: `*_min`,
    `*_max`, `*_argmin`, `*_argmax` (lists, parameter units); plus `n_samples`,
    `n_vertices`, `n_nonfinite`, `gradient_evaluations`. `format_comparison` prints it.
    """
    if not isinstance(box, Interval):
        raise TypeError(f"compare: `box` must be an Interval, got {type(box).__name__}.")
    corners = box.vertices()
    p = box.sample(n, method, seed)
    y = run_batch(scalar_fn, np.concatenate([corners, p]), chunk_size=chunk_size, progress=progress, devices=devices)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (len(corners) + len(p),):
        raise ValueError(f"compare: `scalar_fn` must return a scalar, got per-sample shape {y.shape[1:]}.")
    out = {"n_samples": len(p), "n_vertices": len(corners), "n_nonfinite": int(np.sum(~np.isfinite(y)))}
    for name, pts, vals in (("vertex", corners, y[: len(corners)]), ("sampled", p, y[len(corners) :])):
        ok = np.isfinite(vals)
        if not ok.any():
            raise FloatingPointError(f"compare: every {name} value is non-finite.")
        env = envelope(vals, ok)
        out.update(
            {
                f"{name}_min": float(env.lower),
                f"{name}_max": float(env.upper),
                f"{name}_argmin": pts[int(env.argmin)].tolist(),
                f"{name}_argmax": pts[int(env.argmax)].tolist(),
            }
        )
    ext = extreme_search(scalar_fn, box, optimizer, steps, starts, seed=seed)
    out.update(
        {
            "gradient_min": ext.min,
            "gradient_max": ext.max,
            "gradient_argmin": ext.argmin.tolist(),
            "gradient_argmax": ext.argmax.tolist(),
            "gradient_evaluations": ext.evaluations,
        }
    )
    return out


def format_comparison(result: dict, names=None) -> str:
    """Plain-text table of a `compare` result (method, min, argmin, max, argmax)."""
    fmt = lambda v: "[" + ", ".join(f"{x:.6g}" for x in v) + "]"
    lines = [f"{'method':<9} {'min':>14} {'argmin':>28} {'max':>14} {'argmax':>28}"]
    for m in ("sampled", "vertex", "gradient"):
        lines.append(
            f"{m:<9} {result[m + '_min']:>14.8g} {fmt(result[m + '_argmin']):>28} "
            f"{result[m + '_max']:>14.8g} {fmt(result[m + '_argmax']):>28}"
        )
    if names:
        lines.append("parameters: " + ", ".join(names))
    return "\n".join(lines)
