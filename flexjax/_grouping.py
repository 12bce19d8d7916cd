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


def gather_rows(x, index: np.ndarray):
    """`x[index]` for a static integer index array (one gather for a whole group)."""
    return x[jnp.asarray(index)]
