"""Batch-wide decisions under `vmap`: one branch for the whole batch instead of a
`select` that evaluates both branches for every sample (`batch_any`, `update_where`),
work done only for the samples that ask for it (`formed_where`),
one mean for the batch (`batch_mean`),
one value and its first-order change across the batch computed once instead of once
per sample (`batch_linearized`); and `max_abs`, `sum_last`, per-sample reductions that
fuse under `vmap`.

Each batch-wide function takes an optional per-sample mask `ok`: the samples where it is
False (a simulation whose step has failed) take no part in the decision or the
statistic, so that their state, NaN or diverged, never reaches the other samples.
Without `ok` every sample takes part."""

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool


@jax.custom_batching.custom_vmap
def _batch_any(flag):
    return flag


@_batch_any.def_vmap
def _batch_any_vmap(axis_size, in_batched, flag):
    return (jnp.any(flag) if in_batched[0] else flag), False


def batch_any(flag: Bool[Array, ""], ok: Bool[Array, ""] | None = None) -> Bool[Array, ""]:
    """`flag & ok` (`flag` without `ok`); under `vmap`, one unbatched `any` over the
    batch, to which the samples where `ok` is False contribute nothing.

    A `lax.cond` on a batched predicate turns into a `select` that evaluates both
    branches for every sample; on the result of `batch_any` it stays a branch, taken
    for the whole batch when any sample asks for it."""
    return _batch_any(flag if ok is None else flag & ok)


def _masked_mean(x, ok):
    """Mean over the leading (batch) axis of the rows where `ok` (of every row if none
    is). The excluded rows are replaced by zeros before summing, so a NaN or inf in them
    does not reach the result."""
    okf = ok.reshape(ok.shape + (1,) * (x.ndim - 1))
    count = jnp.sum(ok)
    masked = jnp.sum(jnp.where(okf, x, 0), axis=0) / jnp.maximum(count, 1).astype(x.dtype)
    return jnp.where(count > 0, masked, jnp.mean(x, axis=0))


@jax.custom_batching.custom_vmap
def _batch_mean(x, ok):
    return x


@_batch_mean.def_vmap
def _batch_mean_vmap(axis_size, in_batched, x, ok):
    x_batched, ok_batched = in_batched
    if not x_batched:
        return x, False
    if not ok_batched:  # one mask for every sample: all of them, or (no sample selected) all
        return jnp.mean(x, axis=0), False
    return _masked_mean(x, ok), False


def batch_mean(x, ok: Bool[ArrayLike, ""] | None = None):
    """`x` itself; under `vmap`, one unbatched mean over the batch (for quantities that
    refer to the batch's representative sample, like a shared Newton matrix), over the
    samples where `ok` if given (over all of them if no sample is)."""
    return _batch_mean(x, jnp.ones((), bool) if ok is None else jnp.asarray(ok))


def update_where(need, make, x, old, ok=None):
    """`(make(x), True)` if `need` (for every sample of a batch if any needs it),
    else `(old, False)`; `make` is evaluated only then. Samples where `ok` is False ask
    for nothing."""
    need = batch_any(need, ok)
    return jax.lax.cond(need, lambda: make(x), lambda: old), need


def formed_where(need, make, x, old):
    """`make(x)` where `need`, else `old`; `make` is evaluated only where it is needed.

    Without `vmap`: a branch. Under `vmap`: a loop over the samples that need it, each
    evaluated on its own (its own values of whatever `make` closes over), so a batch
    whose samples ask at different times pays for the samples that ask, not for the
    whole batch every time one of them does; the others keep `old`. For the Newton
    matrices of a batch (`newton.KeptNewton`): each sample forms its matrix when its
    own convergence asks for one, so batched samples rarely ask together."""
    flat, consts = hoisted(make, x)

    @jax.custom_batching.custom_vmap
    def call(need, x, old, consts):
        return jax.lax.cond(need, lambda: flat(consts, x), lambda: old)

    @call.def_vmap
    def _call_vmap(axis_size, in_batched, need, x, old, consts):
        need_b, x_b, old_b, consts_b = in_batched
        old_b = jax.tree_util.tree_leaves(old_b)
        old_leaves, old_tree = jax.tree_util.tree_flatten(old)
        out = [o if b else jnp.broadcast_to(o, (axis_size,) + o.shape) for o, b in zip(old_leaves, old_b, strict=True)]
        need = need if need_b else jnp.broadcast_to(need, (axis_size,))
        batched = lambda: jax.tree_util.tree_map(lambda _: True, old)

        def own(i):  # sample i's new value, from its own closed-over values
            c = [ci[i] if b else ci for ci, b in zip(consts, consts_b, strict=True)]
            return jax.tree_util.tree_leaves(flat(c, x[i] if x_b else x))

        if axis_size == 1:
            # one sample: its own branch. XLA turns the loop below, whose trip count it
            # can bound by one, into straight code that forms the matrix on every call
            new = jax.lax.cond(need[0], lambda: own(0), lambda: [o[0] for o in out])
            return jax.tree_util.tree_unflatten(old_tree, [v[None] for v in new]), batched()
        rows = jnp.nonzero(need, size=axis_size, fill_value=0)[0]

        def one(k, out):
            i = rows[k]
            return [o.at[i].set(v) for o, v in zip(out, own(i), strict=True)]

        out = jax.lax.fori_loop(0, jnp.sum(need.astype(jnp.int32)), one, out)
        return jax.tree_util.tree_unflatten(old_tree, out), batched()

    return call(need, x, old, consts)


def hoisted(fun, *args):
    """`fun` as a function `(consts, *args)` of `args` and of the traced values it closes
    over, with those values. For functions whose transformation rules are traced
    after the caller's trace has ended (custom derivative and batching rules), which
    must not close over any tracer (`jax.closure_convert` keeps integer and boolean
    ones)."""
    closed, shapes = jax.make_jaxpr(fun, return_shape=True)(*args)
    out_tree = jax.tree_util.tree_structure(shapes)
    flat = lambda consts, *a: jax.tree_util.tree_unflatten(
        out_tree, jax.core.eval_jaxpr(closed.jaxpr, consts, *jax.tree_util.tree_leaves(a))
    )
    return flat, list(closed.consts)


def _representative(value, batched: bool, ok=None, first=0):
    """One value for a whole batch: the mean over the batch of an inexact array, the
    first sample of any other; with a mask `ok` (batched), the mean over the samples
    where it holds and the first of them (`first`)."""
    if not batched:
        return value
    if not jnp.issubdtype(value.dtype, jnp.inexact):
        return value[first]
    return jnp.mean(value, axis=0) if ok is None else _masked_mean(value, ok)


def _principal_direction(z):
    """Unit leading right singular vector of `z` (N, P): the top eigenvector of the
    P x P Gram matrix (P, the number of varying parameter entries, is small)."""
    return jnp.linalg.eigh(z.T @ z)[1][:, -1]


def batch_linearized(fun, params, ok=None):
    r"""`fun(x, params)` as a function of `x` that returns `(value, slope, t)`.

    Without `vmap`: `(fun(x, params), 0, 0)`. Under `vmap`: `value` is `fun` evaluated
    once at the batch's representative sample (the mean of every batched inexact input,
    including the values `fun` closes over; the first sample of integer and boolean
    ones), `slope` its derivative along $d$, the first principal direction
    of the deviations of the batched floating-point leaves of `params` from their mean
    (each leaf element standardized by its spread over the batch), and `t` each sample's
    coordinate along $d$, so that
    $\text{fun}(\bar x, \bar p + t_i d) = \text{value} + t_i\,\text{slope} + O(t_i^2)$.
    `value` and `slope` are shared (unbatched), `t` is batched. With one varying
    parameter $d$ is that parameter's axis; with several, their dominant combination.

    With a per-sample mask `ok`, the representative sample, the spread and $d$ are
    those of the samples where it holds (of all samples if none does): the others, a
    failed simulation's NaN or diverged state, do not enter them. Every sample still
    gets its coordinate `t`.

    For quantities that only steer an iteration (a Newton matrix kept for a batch of
    similar samples, corrected to first order in each sample's parameter offset);
    never for results."""

    mask = jnp.ones((), bool) if ok is None else jnp.asarray(ok)

    def linearized(x):
        flat, consts = hoisted(fun, x, params)
        p_leaves, p_tree = jax.tree_util.tree_flatten(params)
        n_p = len(p_leaves)
        dtype = jnp.result_type(x)

        @jax.custom_batching.custom_vmap
        def call(x, p_leaves, consts, mask):
            value = flat(consts, x, jax.tree_util.tree_unflatten(p_tree, p_leaves))
            zeros = jax.tree_util.tree_map(jnp.zeros_like, value)
            return value, zeros, jnp.zeros((), dtype)

        @call.def_vmap
        def _call_vmap(axis_size, in_batched, x, p_leaves, consts, mask):
            x_batched, p_batched, c_batched, mask_batched = in_batched
            # without a batched mask every sample counts: the unmasked statistics, unchanged
            sel = mask if mask_batched else None
            first = jnp.argmax(mask) if mask_batched else 0
            x_bar = _representative(x, x_batched, sel, first)
            c_bar = [_representative(c, b, sel, first) for c, b in zip(consts, c_batched, strict=True)]
            p_bar = [_representative(p, b, sel, first) for p, b in zip(p_leaves, p_batched, strict=True)]
            varying = [k for k in range(n_p) if p_batched[k] and jnp.issubdtype(p_leaves[k].dtype, jnp.inexact)]

            def at(floats):  # fun at the mean, with the varying parameter leaves replaced
                leaves = list(p_bar)
                for k, v in zip(varying, floats, strict=True):
                    leaves[k] = v
                return flat(c_bar, x_bar, jax.tree_util.tree_unflatten(p_tree, leaves))

            if not varying:
                value = at([])
                return (
                    (value, jax.tree_util.tree_map(jnp.zeros_like, value), jnp.zeros((axis_size,), dtype)),
                    (jax.tree_util.tree_map(lambda _: False, value),) * 2 + (True,),
                )
            dev = jnp.concatenate([(p_leaves[k] - p_bar[k]).reshape(axis_size, -1) for k in varying], axis=1)
            if sel is None:
                spread = jnp.sqrt(jnp.mean(dev * dev, axis=0))
                spread = jnp.where(spread > 0, spread, 1.0)
                standardized = dev / spread[None, :]
                w = _principal_direction(standardized)
            else:  # the statistics of the selected samples; every sample's coordinate
                spread = jnp.sqrt(_masked_mean(dev * dev, sel))
                spread = jnp.where(spread > 0, spread, 1.0)
                standardized = dev / spread[None, :]
                w = _principal_direction(jnp.where(sel[:, None], standardized, 0.0))
            t = standardized @ w
            d, tangents, start = w * spread, [], 0
            for k in varying:
                size = p_bar[k].size
                tangents.append(d[start : start + size].reshape(p_bar[k].shape).astype(p_bar[k].dtype))
                start += size
            value, slope = jax.jvp(at, ([p_bar[k] for k in varying],), (tangents,))
            unbatched = jax.tree_util.tree_map(lambda _: False, value)
            return (value, slope, t.astype(dtype)), (unbatched, unbatched, True)

        return call(x, p_leaves, consts, mask)

    return linearized


def _pairwise(x, op):
    """`op`-reduction over the last axis as a tree of elementwise `op`s (see `max_abs`)."""
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        pair = op(x[..., :half], x[..., half : 2 * half])
        x = jnp.concatenate([pair, x[..., 2 * half :]], axis=-1)
    return x[..., 0]


def max_abs(x):
    """`max(|x|)` over the last axis, as a tree of elementwise maxima (NaN propagates;
    0 for an empty axis). XLA fuses these with the surrounding elementwise work, where a
    `reduce` over a short row becomes a library call (YNNPACK on CPU) that costs more
    than the arithmetic: under `vmap`, once per sample and Newton iteration."""
    x = jnp.abs(x)
    if x.shape[-1] == 0:
        return jnp.zeros(x.shape[:-1], x.dtype)
    return _pairwise(x, jnp.maximum)


def sum_last(x):
    """Sum over the last axis as a tree of elementwise additions, fusable like `max_abs`
    (0 for an empty axis)."""
    if x.shape[-1] == 0:
        return jnp.zeros(x.shape[:-1], x.dtype)
    return _pairwise(x, jnp.add)
