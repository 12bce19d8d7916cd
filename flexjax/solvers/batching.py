"""Batch-wide decisions under `vmap`: one branch for the whole batch instead of a
`select` that evaluates both branches for every sample (`batch_any`, `update_where`),
and one value computed for the whole batch instead of one per sample
(`batch_shared`); and `max_abs`, a per-sample norm that fuses under `vmap`."""

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool


@jax.custom_batching.custom_vmap
def batch_any(flag: Bool[Array, ""]) -> Bool[Array, ""]:
    """`flag` itself; under `vmap`, one unbatched `any` over the batch.

    A `lax.cond` on a batched predicate turns into a `select` that evaluates both
    branches for every sample; on the result of `batch_any` it stays a branch, taken
    for the whole batch when any sample asks for it."""
    return flag


@batch_any.def_vmap
def _batch_any_vmap(axis_size, in_batched, flag):
    return (jnp.any(flag) if in_batched[0] else flag), False


def update_where(need, make, x, old):
    """`(make(x), True)` if `need` (for every sample of a batch if any needs it),
    else `(old, False)`; `make` is evaluated only then."""
    need = batch_any(need)
    return jax.lax.cond(need, lambda: make(x), lambda: old), need


def hoisted(fun, *args):
    """`fun` as a function `(consts, *args)` of `args` and of the traced values it closes
    over, with those values. For functions whose transformation rules are traced
    after the caller's trace has ended (custom derivative and batching rules), which
    must not close over any tracer (`jax.closure_convert` keeps integer and boolean
    ones)."""
    closed, shapes = jax.make_jaxpr(fun, return_shape=True)(*args)
    out_tree = jax.tree_util.tree_structure(shapes)
    flat = lambda consts, *a: jax.tree_util.tree_unflatten(
        out_tree, jax.core.eval_jaxpr(closed.jaxpr, consts, *jax.tree_util.tree_leaves(a)))
    return flat, list(closed.consts)


def _representative(value, batched: bool):
    """One value for a whole batch: the mean over the batch of an inexact array, the
    first sample of any other."""
    if not batched:
        return value
    return jnp.mean(value, axis=0) if jnp.issubdtype(value.dtype, jnp.inexact) else value[0]


def batch_shared(fun):
    """`fun` itself; under `vmap`, `fun` evaluated once, at the batch's representative
    sample (the mean of every batched inexact input, including the values `fun` closes
    over; the first sample of integer and boolean ones), and the one result shared by
    every sample (returned unbatched).

    For quantities that only steer an iteration and may be approximate, such as a
    Newton matrix kept for a batch of similar samples (mean-based preconditioning);
    never for results."""

    def shared(x):
        flat, consts = hoisted(fun, x)

        @jax.custom_batching.custom_vmap
        def call(x, consts):
            return flat(consts, x)

        @call.def_vmap
        def _call_vmap(axis_size, in_batched, x, consts):
            x_batched, consts_batched = in_batched
            out = call(_representative(x, x_batched), [_representative(c, b) for c, b in zip(consts, consts_batched)])
            return out, jax.tree_util.tree_map(lambda _: False, out)

        return call(x, consts)

    return shared


def max_abs(x):
    """`max(|x|)` over the last axis, as a tree of elementwise maxima (NaN propagates;
    0 for an empty axis). XLA fuses these with the surrounding elementwise work, where a
    `reduce` over a short row becomes a library call (YNNPACK on CPU) that costs more
    than the arithmetic: under `vmap`, once per sample and Newton iteration."""
    x = jnp.abs(x)
    if x.shape[-1] == 0:
        return jnp.zeros(x.shape[:-1], x.dtype)
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        pair = jnp.maximum(x[..., :half], x[..., half : 2 * half])
        x = jnp.concatenate([pair, x[..., 2 * half :]], axis=-1)
    return x[..., 0]
