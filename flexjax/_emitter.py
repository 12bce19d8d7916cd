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
the arguments close over). A call with an input traced by `jit`, `grad` or `jvp`
compiles with XLA's defaults; inside an enclosing `jit` the program is part of the
enclosing one and takes its options. A jaxlib that does not know the option (those
before 0.5.3) gets the default program.
"""

import functools
import types

import equinox as eqx
import jax

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
    differentiated (`may_be_differentiated`) and with XLA's defaults for the others;
    `.program(*args)` is the compiled function that a call with `args` uses."""
    default = eqx.filter_jit(fn)
    older = eqx.filter_jit(fn, compiler_options=OLDER_EMITTER)

    def program(*args, **kwargs):
        if may_be_differentiated((args, kwargs)) or not older_emitter_available():
            return default
        return older

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return program(*args, **kwargs)(*args, **kwargs)

    call.program = program
    return call
