"""Python's cyclic garbage collector paused while flexjax traces and compiles.

Tracing a model allocates hundreds of thousands of short-lived Python objects
(tracers, equations, source locations). Each 700 allocations start a young-generation
collection, and as the traced program grows, full collections walk every live object
of the process; on the flexible slider-crank they took about a fifth of the trace
and lowering of `simulate`'s program (docs/compile.md). Nearly all of these objects
are freed by reference counting anyway, so the entry points (`simulate`,
`simulate_ode`, `simulate_contact`, `solve_static`, `run_batch`,
`System.consistent_state`, `modes`, `extreme_search`, the models' start-state helpers,
and each loss-and-gradient call of `minimize`) pause the collector for the duration of
the call and restore it afterwards: its thresholds and state are the caller's again on return,
whatever the call raised. Cyclic garbage made meanwhile is collected by the next
collection after the call.
"""

import functools
import gc


def gc_paused(fn):
    """`fn` run with Python's cyclic garbage collector disabled (re-enabled on return
    if it was enabled on entry; nested calls leave it to the outermost)."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return call
