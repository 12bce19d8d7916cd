"""XLA's older CPU kernel emitter for flexjax's programs that are never differentiated.

XLA's CPU compiler emits most fused kernels through its MLIR fusion emitters (its
default since 2025). On flexjax's programs, hundreds of small fused kernels each, the
older elemental emitter (`xla_cpu_use_fusion_emitters=False`) takes about half of their
XLA compile time, and the compiled runs take from 13 % less to 9 % more time, results equal to
rounding (docs/compile.md).

It is not set for the whole process (`XLA_FLAGS`), because its kernels may round the
same expression differently where XLA computes it twice, in two kernels, and some
derivatives compare values bit for bit: the derivative of `jnp.max` marks the entries
equal to the maximum, so with that emitter a gradient of a peak value can come out
silently wrong (a mobile robot's drift gradient: 6.712e-9 against 6.7386e-9 from central
differences and from the default emitter, when its residuals were taken by `jnp.max`).
So it is asked for per program (`forward_jit`, a stand-in for `eqx.filter_jit`), and only
for calls that cannot be differentiated: every input concrete, or batched by `vmap` only
(`may_be_differentiated`, which also looks into the values that the functions among
the arguments close over). A call with an input traced by `jit` or `jvp`
compiles with XLA's defaults; inside an enclosing `jit` the program is part of the
enclosing one and takes its options. A jaxlib that does not know the option (those
before 0.5.3) gets the default program.

A call differentiated in reverse mode (`jax.grad`, `vjp`, `jacrev`) on numbers, outside
`jit`, compiles two programs of its own (`reverse_call`): the forward run with its
pullback (`jax.vjp` inside one program) and the pullback applied to a cotangent,
joined to the caller's gradient by a `jax.custom_vjp`. JAX does not let a program
staged for differentiation carry compiler options, so this is what lets them have
one. Each takes the older emitter unless it compares a value bit for bit with a
maximum or minimum (`compares_with_an_extremum`: the derivative of `max`, `min` and
their reductions, or a user's own `x == jnp.max(x)`), the one pattern where that
emitter's rounding changed a derivative.
"""

import functools
import sys
import types

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

OLDER_EMITTER = {"xla_cpu_use_fusion_emitters": False}


def may_be_differentiated(tree) -> bool:
    """False when every array in `tree`, and every value its functions close over, is
    concrete or only batched by `vmap`: such a call cannot be differentiated."""

    def traced(x):
        # a vmap tracer holds its batched value in `val` (if that ever changes, every
        # tracer counts as differentiable: the safe side)
        while type(x).__name__ == "BatchTracer" and hasattr(x, "val"):
            x = x.val
        return isinstance(x, jax.core.Tracer)

    return _any_leaf(tree, traced)


def nothing_traced(tree) -> bool:
    """True when every array in `tree`, and every value its functions close over, is
    concrete: no transformation is tracing it."""
    return not _any_leaf(tree, lambda x: isinstance(x, jax.core.Tracer))


def _any_leaf(tree, traced) -> bool:
    """Whether `traced` holds for a leaf of `tree` or a value its functions close over."""
    from ._structural import StructuralFunction, _Identity, _key

    def closes_over_traced(key):  # a function's structural key holds its closure's tracers
        if isinstance(key, _Identity):
            return traced(key.obj)
        return isinstance(key, tuple) and any(closes_over_traced(k) for k in key)

    def leaf(x):
        if isinstance(x, StructuralFunction):
            return closes_over_traced(x._key)
        if isinstance(x, (types.FunctionType, functools.partial)):
            return closes_over_traced(_key(x))
        return traced(x)

    return any(leaf(x) for x in jax.tree_util.tree_leaves(tree))


def staged() -> bool:
    """Whether this call is being traced into an enclosing program (a `jit`, a loop body,
    `jax.make_jaxpr`), also when its own inputs are concrete numbers (the enclosing
    function closes over them): a program called there becomes part of the enclosing
    one, which alone may carry compiler options. `vmap`, `jvp` and `grad` of a top-level
    call do not stage it. A trace this does not know counts as staging (the safe side)."""
    try:
        from jax._src import core

        trace = core.trace_ctx.trace
        while not isinstance(trace, core.EvalTrace):
            parent = getattr(trace, "parent_trace", None)
            if parent is None or type(trace).__name__ in ("DynamicJaxprTrace", "JaxprTrace"):
                return True
            trace = parent
        return False
    except Exception:  # another JAX layout: keep XLA's defaults
        return True


@functools.cache
def older_emitter_available() -> bool:
    """Whether this jaxlib accepts `OLDER_EMITTER` (one tiny compile, once per process)."""
    try:
        jax.jit(lambda x: x + 1, compiler_options=OLDER_EMITTER).lower(1.0).compile()
    except Exception:  # "No such compile option": an older (or newer) XLA
        return False
    return True


def forward_jit(fn):
    """`eqx.filter_jit(fn)`, compiled with `OLDER_EMITTER` for calls that cannot be
    differentiated (`may_be_differentiated`), through `reverse_call` for calls
    differentiated in reverse mode on numbers (`reverse_mode_only`), and with XLA's
    defaults for the others; `.program(*args)` is the function that a call with `args`
    uses."""
    default = eqx.filter_jit(fn)
    older = eqx.filter_jit(fn, compiler_options=OLDER_EMITTER)
    compiled = {}  # reverse_call's programs, per structure and shapes
    reverse = functools.partial(reverse_call, fn, compiled)

    def program(*args, **kwargs):
        if not older_emitter_available() or staged():
            return default
        if reverse_mode_only((args, kwargs)):
            return reverse
        return default if may_be_differentiated((args, kwargs)) else older

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return program(*args, **kwargs)(*args, **kwargs)

    call.program = program
    call.reverse_programs = compiled
    return call


def _reverse_tracer(x) -> bool:
    """A tracer of reverse-mode differentiation over a number."""
    return type(x).__name__ == "LinearizeTracer" and not isinstance(getattr(x, "primal", x), jax.core.Tracer)


def reverse_mode_only(tree) -> bool:
    """Whether `tree` is differentiated in reverse mode on numbers, outside any `jit`:
    at least one leaf traced, each traced leaf a reverse-mode tracer over a number, no
    function among the leaves closing over a traced value, and not inside
    `jax.linearize` (whose forward evaluation a `custom_vjp` does not allow)."""
    leaves = jax.tree_util.tree_leaves(tree)
    traced = [x for x in leaves if isinstance(x, jax.core.Tracer)]
    if not traced or not all(_reverse_tracer(x) for x in traced):
        return False
    functions = [x for x in leaves if not isinstance(x, jax.core.Tracer)]
    return not may_be_differentiated(functions) and not _inside_linearize()


def _inside_linearize() -> bool:
    """Whether `jax.linearize` is on the call stack (its tracers are those of `grad`)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "linearize" and frame.f_globals.get("__name__") == "jax._src.api":
            return True
        frame = frame.f_back
    return False


# the primitives whose derivative marks the entries equal to their result, the
# comparisons (`x >= jnp.max(x)` marks them too), and the operations that only reshape
# a value on its way to a comparison
_EXTREMA = frozenset({"max", "min", "reduce_max", "reduce_min", "cummax", "cummin"})
_COMPARISONS = frozenset({"eq", "ne", "ge", "gt", "le", "lt"})
_RESHAPES = frozenset({"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "convert_element_type", "copy"})


def compares_with_an_extremum(jaxpr) -> bool:
    """Whether `jaxpr` (or a jaxpr inside it) compares values (`==`, `!=`, `<`, ...) with
    the result of a maximum or minimum: the derivative of `max`, `min` and their reductions
    does, and XLA's older emitter may round the compared values differently in two
    kernels. True when the jaxpr cannot be read (the safe side)."""
    try:
        from jax._src import core

        producer = {}
        for eqn in jaxpr.eqns:
            for sub in core.jaxprs_in_params(eqn.params):
                if compares_with_an_extremum(sub):
                    return True
            if eqn.primitive.name in _COMPARISONS and any(_from_extremum(v, producer) for v in eqn.invars):
                return True
            for v in eqn.outvars:
                producer[v] = eqn
        return False
    except Exception:  # an unknown jaxpr layout: keep XLA's defaults
        return True


def _from_extremum(v, producer) -> bool:
    from jax._src import core

    while isinstance(v, core.Var) and v in producer:
        eqn = producer[v]
        if eqn.primitive.name in _EXTREMA:
            return True
        if eqn.primitive.name not in _RESHAPES:
            return False
        v = eqn.invars[0]
    return False


def largest_abs(x):
    r"""$\max_i |x_i|$ (0 for an empty `x`), taken by `argmax` and indexing: its derivative
    is that of the largest entry and compares nothing bit for bit (the derivative of
    `jnp.max` marks the entries equal to the maximum; `compares_with_an_extremum`)."""
    if x.shape[0] == 0:
        return jnp.zeros((), x.dtype)
    a = jnp.abs(x)
    return a[jnp.argmax(a)]


def compile_traced(traced):
    """A traced top-level program (`jax.jit(f).trace(...)`) compiled with `OLDER_EMITTER`
    unless it compares with an extremum (`compares_with_an_extremum`) or this jaxlib
    lacks the option."""
    older = older_emitter_available() and not compares_with_an_extremum(traced.jaxpr.jaxpr)
    return traced.lower().compile(compiler_options=OLDER_EMITTER if older else None)


def _aot(f, *args):
    """`jax.jit(f)` compiled for `args` (`compile_traced`)."""
    return compile_traced(jax.jit(f).trace(*args))


def _split(tree):
    """`tree`'s leaves, structure, and its leaves with every array replaced by None (the
    static part, as `eqx.filter_jit` takes it)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return leaves, treedef, tuple(None if eqx.is_array(x) else x for x in leaves)


def _joined(treedef, static, arrays):
    """The tree of `_split`, with `arrays` (pairs of leaf index and array) put back."""
    full = list(static)
    for i, x in arrays:
        full[i] = x
    return jax.tree_util.tree_unflatten(treedef, full)


def checked_jit(fn):
    """`eqx.filter_jit(fn)` for a top-level program that may differentiate (a loss and
    its gradient, a search): compiled once per structure and shapes by `compile_traced`
    (the older emitter unless it compares with an extremum). Called with traced
    arguments, it is `eqx.filter_jit(fn)`."""
    default = eqx.filter_jit(fn)
    compiled = {}

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not nothing_traced((args, kwargs)) or staged():
            return default(*args, **kwargs)
        leaves, treedef, static = _split((args, kwargs))
        dynamic = [i for i, x in enumerate(leaves) if eqx.is_array(x)]
        arrays = [leaves[i] for i in dynamic]
        key = (treedef, static, tuple(jax.typeof(x) for x in arrays))

        def program(arrays):
            a, k = _joined(treedef, static, zip(dynamic, arrays, strict=True))
            return fn(*a, **k)

        program.__name__ = program.__qualname__ = getattr(fn, "__name__", "fn")
        if key not in compiled:
            compiled[key] = _aot(program, arrays)
        return compiled[key](arrays)

    call.compiled = compiled
    return call


def reverse_call(fn, compiled, *args, **kwargs):
    """`fn(*args, **kwargs)` for arguments differentiated in reverse mode on numbers
    (`reverse_mode_only`): the forward run and its pullback compiled as one program, the
    pullback's application as another (each by `_aot`, kept in `compiled` per structure
    and shapes), joined to the caller's differentiation by a `jax.custom_vjp`. Array
    leaves are arguments of both programs, other leaves are static (as for
    `eqx.filter_jit`)."""
    leaves, treedef, static = _split((args, kwargs))
    dynamic = [i for i, x in enumerate(leaves) if eqx.is_array(x)]
    diff = [i for i in dynamic if _reverse_tracer(leaves[i]) and jnp.issubdtype(leaves[i].dtype, jnp.inexact)]
    moving = set(diff)
    others = [i for i in dynamic if i not in moving]
    value = lambda x: x.primal if _reverse_tracer(x) else x
    avals = tuple(jax.typeof(value(leaves[i])) for i in dynamic)
    key = (treedef, static, avals, tuple(diff))

    def run(d, o):
        a, k = _joined(treedef, static, zip(diff + others, list(d) + list(o), strict=True))
        return fn(*a, **k)

    def forward(d, o):
        return jax.vjp(lambda d: run(d, o), d)

    name = getattr(fn, "__name__", "fn")
    forward.__name__ = forward.__qualname__ = name  # `jit(_whole_run)` in compile logs

    def apply_pullback(p, c):
        return p(c)[0]

    apply_pullback.__name__ = apply_pullback.__qualname__ = f"{name}_pullback"
    d = [value(leaves[i]) for i in diff]
    o = [value(leaves[i]) for i in others]
    entry = compiled.setdefault(key, {})
    if "forward" not in entry:
        entry["forward"] = _aot(forward, d, o)
    out, pullback = entry["forward"](d, o)
    out_leaves, out_def = jax.tree_util.tree_flatten(out)
    floating = [jnp.issubdtype(x.dtype, jnp.inexact) for x in out_leaves]

    def merged(floats, base):  # the leaves of `base`, its floating ones from `floats`
        it = iter(floats)
        return [next(it) if f else x for x, f in zip(base, floating, strict=True)]

    @jax.custom_vjp
    def attach(d):
        return [x for x, f in zip(out_leaves, floating, strict=True) if f]

    def attach_fwd(d):
        return attach(d), None

    def attach_bwd(_, ct):
        zero = [np.zeros(x.shape, jax.dtypes.float0) for x in out_leaves]  # integer outputs
        ct = jax.tree_util.tree_unflatten(out_def, merged(ct, zero))
        if not nothing_traced(ct):  # `jacrev` maps the pullback over cotangents; a `jit` around it
            return (entry.setdefault("traced", jax.jit(apply_pullback))(pullback, ct),)
        if "backward" not in entry:
            entry["backward"] = _aot(apply_pullback, pullback, ct)
        return (entry["backward"](pullback, ct),)

    attach.defvjp(attach_fwd, attach_bwd)
    return jax.tree_util.tree_unflatten(out_def, merged(attach([leaves[i] for i in diff]), out_leaves))
