r"""Structural equality for the plain Python functions stored in a model.

A model may hold callables: a driver's $g(t)$, a coordinate map $f(q_b)$, a force law.
Compiled programs are cached by the static part of their arguments, and a Python
function compares by identity, so rebuilding an identical model (a builder called
again, a loss function that constructs its `System` from parameters) would compile
everything again. `structural(tree)` wraps every plain function leaf of a pytree in a
`StructuralFunction`, which compares equal to another exactly when calling either runs
the same code on the same values: the same code object, equal defaults, equal
closure contents and equal values of the globals the code reads. Arrays compare by
shape, dtype and value; tracers and objects without value equality by identity, so
two functions that might compute different things never share a program.

A Python `float` leaf (a parameter set with `eqx.tree_at(..., 0.8)`, which bypasses the
field converters) would be a static argument of `eqx.filter_jit`: every new value a
new program. `structural` makes such leaves float64 arrays, so they are traced like
every other parameter.
"""

import functools
import hashlib
import types

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._gc import gc_paused

_SCALARS = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))


class _Identity:
    """Key of an object compared by identity (keeps the object alive with the key)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def _array_key(x):
    a = np.ascontiguousarray(x)
    return ("array", a.shape, a.dtype.str, hashlib.sha256(a.tobytes()).hexdigest())


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _function_key(fn, seen):
    code = fn.__code__
    if code in seen:  # recursion through globals or closures
        return ("recursive", code)
    seen = seen | {code}
    closure = tuple(_key(c.cell_contents, seen) if _filled(c) else ("empty",) for c in fn.__closure__ or ())
    globals_ = tuple(
        (name, _key(fn.__globals__[name], seen)) for name in sorted(_global_names(code)) if name in fn.__globals__
    )
    kwdefaults = tuple(sorted((k, _key(v, seen)) for k, v in (fn.__kwdefaults__ or {}).items()))
    return ("function", code, _key(fn.__defaults__ or (), seen), kwdefaults, closure, globals_)


def _filled(cell):
    try:
        _ = cell.cell_contents
    except ValueError:  # an empty cell (a closure variable not yet assigned)
        return False
    return True


def _key(x, seen=frozenset()):
    """A hashable key equal for objects that behave identically as constants of a program."""
    if isinstance(x, _SCALARS):
        return (type(x).__name__, x)
    if isinstance(x, StructuralFunction):
        return x._key
    if isinstance(x, types.FunctionType):
        return _function_key(x, seen)
    if isinstance(x, functools.partial):
        kw = tuple(sorted((k, _key(v, seen)) for k, v in x.keywords.items()))
        return ("partial", _key(x.func, seen), _key(x.args, seen), kw)
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(_key(v, seen) for v in x))
    if isinstance(x, dict):
        try:
            items = sorted(x.items())
        except TypeError:
            return _Identity(x)
        return ("dict", tuple((k, _key(v, seen)) for k, v in items))
    if isinstance(x, jax.core.Tracer):
        return _Identity(x)
    if isinstance(x, (np.ndarray, np.generic, jax.Array)):
        return _array_key(x)
    if isinstance(x, (types.ModuleType, type, types.BuiltinFunctionType)):
        return _Identity(x)
    leaves, treedef = jax.tree_util.tree_flatten(x)
    if not (len(leaves) == 1 and leaves[0] is x):  # a pytree node (an Equinox module, ...)
        return ("pytree", treedef, tuple(_key(v, seen) for v in leaves))
    try:
        hash(x)
    except TypeError:
        return _Identity(x)
    return ("object", type(x), x) if type(x).__eq__ is not object.__eq__ else _Identity(x)


class StructuralFunction:
    """A plain function that compares and hashes by what it computes (see the module
    docstring); calling it calls the function. The comparison key is taken when the
    wrapper is made, so a closure whose captured array is changed in place afterwards
    compares as what it now computes, never as what an earlier wrapper saw."""

    __slots__ = ("fn", "_key", "_hash")

    def __init__(self, fn):
        self.fn = fn
        self._key = _key(fn)
        self._hash = hash(self._key)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __eq__(self, other):
        if not isinstance(other, StructuralFunction):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"StructuralFunction({self.fn!r})"


def _wrap(x):
    if isinstance(x, (types.FunctionType, functools.partial)):
        return StructuralFunction(x)
    if type(x) is float:  # not bool or int: those may be counts or switches
        return jnp.asarray(x, dtype=float)
    return x


def structural(tree):
    """`tree` with every plain-function leaf wrapped in a `StructuralFunction` and every
    Python `float` leaf made an array, so that equal models built twice, or with other
    parameter values, share their compiled programs."""
    return jax.tree_util.tree_map(_wrap, tree)


def structural_jit(fn):
    """`fn` as one compiled program (`flexjax._emitter.forward_jit`) called on `structural` arguments:
    for helpers of several array operations (a model's start state), which would
    otherwise compile one small program per operation on a first call. Equal models
    and new parameter values reuse the program; Python floats are traced, ints and
    strings stay static; under an outer `jit`, `grad` or `vmap` the program is inlined."""
    from ._emitter import forward_jit

    jitted = forward_jit(fn)

    @functools.wraps(fn)
    @gc_paused
    def call(*args, **kwargs):
        args, kwargs = structural((args, kwargs))
        return jitted(*args, **kwargs)

    return call


def compiled_when_concrete(fn):
    """`fn` run as one compiled program (`structural_jit`) when nothing in its arguments
    is traced (`flexjax._emitter.nothing_traced`) and the call is not being traced into an
    enclosing program (`flexjax._emitter.staged`: a `jit` of a function that closes over
    the numbers): for a model's evaluation methods (`System.mass`, `constraints`, ...),
    which called on numbers would otherwise run, and on a first call compile, one small
    program per array operation. Inside a transformation or an enclosing program they
    are a nested `eqx.filter_jit`: JAX traces the Python once per argument structure and
    shapes and reuses that jaxpr wherever the program calls the method again with
    arguments of that structure and those shapes (a solver's residual, its Jacobian, the
    start and the diagnostics each evaluate the constraints and forces), and XLA
    inlines the calls."""
    from ._emitter import nothing_traced, staged

    jitted = structural_jit(fn)
    nested = eqx.filter_jit(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if nothing_traced((args, kwargs)) and not staged():
            return jitted(*args, **kwargs)
        return nested(*args, **kwargs)

    return call
