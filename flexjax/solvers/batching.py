"""Batch-wide decisions under `vmap`: one branch for the whole batch instead of a
`select` that evaluates both branches for every sample."""

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
