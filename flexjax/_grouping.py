"""Identical bodies and joints evaluated once, through `vmap`, instead of one traced copy each.

A model with repeated parts (the parallel robot's six rods and ten rigid bodies, a chain
of equal links) would otherwise put one copy of a part's code into the compiled program
per part, and compile time grows with the program (docs/compile.md). Parts are grouped
when they compute the same function: the same class, equal static fields and non-array
values, and arrays of equal shapes and dtypes (their values may differ: they are
stacked along a new leading axis and mapped over). The grouping is found when a
function is traced, from the parts at hand, so a model edited with `eqx.tree_at` is
grouped anew. A part without an equal partner is called as it is.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def _is_traced_array(x) -> bool:
    """Arrays whose values are stacked and mapped over: JAX arrays and tracers. NumPy
    arrays and Python values are compared by value instead (code may read them as
    constants)."""
    return isinstance(x, (jax.Array, jax.core.Tracer))


def _leaf_signature(x):
    if _is_traced_array(x):
        return ("array", jnp.shape(x), jnp.result_type(x), getattr(x, "weak_type", False))
    if isinstance(x, np.ndarray):
        return ("numpy", x.shape, x.dtype.str, x.tobytes())
    try:
        hash(x)
    except TypeError:
        return ("object", id(x))  # unhashable: equal only to itself
    return ("value", type(x), x)


def signature(module, skip: tuple[str, ...] = ()):
    """A hashable key equal for modules that compute the same function of their array
    values. Fields named in `skip` (a joint's body indices) enter only as `None` or not."""
    parts = [type(module)]
    for f in dataclasses.fields(module):
        value = getattr(module, f.name, None)
        if f.name in skip:
            parts.append((f.name, value is None))
            continue
        leaves, treedef = jax.tree_util.tree_flatten(value)
        parts.append((f.name, treedef, tuple(_leaf_signature(x) for x in leaves)))
    return tuple(parts)


def groups(keys) -> list[tuple[int, ...]]:
    """Indices of equal keys, in order of first appearance."""
    found: dict = {}
    for i, key in enumerate(keys):
        found.setdefault(key, []).append(i)
    return [tuple(g) for g in found.values()]


def map_stacked(fn, modules, arrays):
    """`fn(*modules_k, *arrays_k)` for every member k of a group, through one `vmap`.

    `modules[a]` lists argument `a`'s module for each member (equal signatures, or all
    `None`); their JAX arrays are stacked along a new leading axis, their other values
    taken from the first member. `arrays` are stacked already (leading axis: member).
    """
    dynamic, static = [], []
    for members in modules:
        if members[0] is None:
            dynamic.append(None)
            static.append(None)
            continue
        leaves0, treedef = jax.tree_util.tree_flatten(members[0])
        columns = zip(*(jax.tree_util.tree_leaves(m) for m in members), strict=True)
        dyn, stat = [], []
        for x0, column in zip(leaves0, columns, strict=True):
            batched = _is_traced_array(x0)
            dyn.append(jnp.stack(column) if batched else None)
            stat.append(None if batched else x0)
        dynamic.append(jax.tree_util.tree_unflatten(treedef, dyn))
        static.append(jax.tree_util.tree_unflatten(treedef, stat))

    def one(dynamic, *xs):
        parts = [None if s is None else eqx.combine(d, s) for d, s in zip(dynamic, static, strict=True)]
        return fn(*parts, *xs)

    return jax.vmap(one)(dynamic, *arrays)


# stretches of equal stride up to which a group's rows are read by slices (the parallel
# robot's groups of 5-7 stretches compiled and ran slower that way than by one gather)
MAX_STRETCHES = 2


def gather_rows(x, index: np.ndarray):
    """`x[index]` for a static integer index array `(G, k)` (one read for a whole group).

    When every row is a run of `k` consecutive entries (a body's coordinates), the rows
    are read by slices: each stretch of rows that start at an equal stride `s >= k`
    (equal bodies stored one after another, as in a chain) by one slice and reshape,
    a stretch of one repeated row (`s = 0`, joints on one body) by a broadcast, and up to
    `MAX_STRETCHES` stretches joined. Their derivatives are slices, pads and sums, which XLA fuses with
    the surrounding arithmetic, where the transpose of a gather is a scatter-add: a kernel
    (with XLA's older CPU emitter, a loop) of its own in every residual and Newton
    matrix. Other index arrays are gathered."""
    index = np.asarray(index)
    G, k = index.shape
    if G == 0 or k == 0 or not np.array_equal(index, index[:, :1] + np.arange(k)):
        return x[jnp.asarray(index)]
    starts, pieces, g = index[:, 0], [], 0
    while g < G:
        stride = int(starts[g + 1] - starts[g]) if g + 1 < G else k
        if stride != 0 and stride < k:  # overlapping rows
            return x[jnp.asarray(index)]
        n = 1
        while g + n < G and starts[g + n] - starts[g + n - 1] == stride:
            n += 1
        start = int(starts[g])
        if stride == 0:
            pieces.append(jnp.broadcast_to(x[start : start + k], (n, k)))
        else:  # pad: the last row's stride, past its k entries
            rows = jnp.pad(x[start : start + stride * (n - 1) + k], (0, stride - k))
            pieces.append(rows.reshape(n, stride)[:, :k])
        g += n
        if len(pieces) > MAX_STRETCHES:  # many slices cost more kernels than a gather
            return x[jnp.asarray(index)]
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces)
