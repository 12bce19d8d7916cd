"""Gradient cost and memory of the generalized-alpha solver on long trajectories.

Reverse-mode gradient of the final tip x of the very flexible planar ANCF pendulum
(4 elements, pinned, h = 1e-4 s, rho_inf = 0.9, `--newton` modified (default) or full
Newton) with respect to E, for 10^3, 10^4, 10^5 steps, with `simulate(checkpoint=True)`
(default: steps recomputed in ~sqrt(n) blocks)
and `checkpoint=False` (every step's linearization stored). For each: AOT compile
time, median run time of `--repeat` warm calls (forward and gradient called in turn,
so that a shared machine's slow drifts hit both), the ratio of the medians and of
the fastest runs, and XLA's compiled temporary-memory plan (`Compiled.memory_analysis()`), which is the
peak scratch memory of the call beyond its inputs and outputs.

    python benchmarks/bench_grad.py                      # 1e3, 1e4, 1e5 steps
    python benchmarks/bench_grad.py --steps 1000,10000 --repeat 3 --json bench_grad.json
"""

import argparse
import json
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache
import statistics
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", default="1000,10000,100000", help="comma-separated step counts")
    p.add_argument("--repeat", type=int, default=3, help="warm runs; the median is reported")
    p.add_argument("--elements", type=int, default=4)
    p.add_argument("--newton", choices=("modified", "full"), default="modified", help="GeneralizedAlpha(newton=...)")
    p.add_argument(
        "--tangent-refinements",
        type=int,
        default=8,
        help="GeneralizedAlpha(tangent_refinements=...); 0 forms and factors the exact matrix",
    )
    p.add_argument("--json", metavar="FILE")
    a = p.parse_args(argv)
    a.steps = [int(x) for x in a.steps.split(",") if x.strip()]
    return a


def loss_fn(n_steps, elements, checkpoint, newton="modified", tangent_refinements=8):
    import jax.numpy as jnp

    import flexjax as fj
    from flexjax.bodies.ancf2d import AncfBeam2D
    from flexjax.joints.ancf import AncfPin

    def f(E):
        beam = AncfBeam2D(1.2, 5540.0, 0.0018, 1.215e-8, E, elements)
        system = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -9.81))])
        q0 = beam.straight_coordinates()
        tr = fj.simulate(
            system,
            q0,
            jnp.zeros_like(q0),
            n_steps * 1e-4,
            1e-4,
            solver=fj.GeneralizedAlpha(rho_inf=0.9, newton=newton, tangent_refinements=tangent_refinements),
            save_every=n_steps,
            consistent=False,
            throw=False,
            checkpoint=checkpoint,
        )
        return tr.q[-1, -4]

    return f


def compile_aot(fn, x):
    """AOT-compiled `fn`, compile time, XLA temporaries (bytes); one warm call done."""
    import jax

    t = time.perf_counter()
    compiled = jax.jit(fn).lower(x).compile()
    compile_s = time.perf_counter() - t
    jax.block_until_ready(compiled(x))
    return compiled, compile_s, compiled.memory_analysis().temp_size_in_bytes


def time_alternating(fns, x, repeat):
    """Wall times of `repeat` rounds, each calling every function of `fns` once, in
    turn: slow drifts of a shared machine then hit all of them alike."""
    import jax

    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times, strict=False):
            t = time.perf_counter()
            jax.block_until_ready(fn(x))
            ts.append(time.perf_counter() - t)
    return times


def main(argv=None):
    a = parse_args(argv)
    import jax
    import jax.numpy as jnp

    import flexjax

    E = jnp.asarray(0.7e6)
    rows = []
    for n in a.steps:
        for ckpt in (True, False):
            f = loss_fn(n, a.elements, ckpt, a.newton, a.tangent_refinements)
            fwd, fc, fm = compile_aot(f, E)
            grad, gc, gm = compile_aot(jax.grad(f), E)
            ft, gt = time_alternating((fwd, grad), E, a.repeat)
            fr, gr = statistics.median(ft), statistics.median(gt)
            rows.append(
                {
                    "steps": n,
                    "checkpoint": ckpt,
                    "forward_compile_s": fc,
                    "forward_run_s": fr,
                    "forward_temp_mb": fm / 1e6,
                    "grad_compile_s": gc,
                    "grad_run_s": gr,
                    "grad_temp_mb": gm / 1e6,
                    "grad_over_forward": gr / fr,
                    "grad_over_forward_min": min(gt) / min(ft),
                    "gradient": float(grad(E)),
                }
            )
            print(
                f"  steps={n} checkpoint={ckpt}: forward {fr:.3f} s, gradient {gr:.3f} s, {gm / 1e6:.2f} MB", flush=True
            )
    dev = jax.local_devices()[0]
    print(
        f"\nflexjax {flexjax.__version__}, jax {jax.__version__}, {dev.platform}:{dev.device_kind}, "
        f"{os.cpu_count()} CPU cores, load {os.getloadavg()[0]:.1f}, float64; ANCF pendulum {a.elements} el., "
        f"h = 1e-4 s, {a.newton} Newton, tangent_refinements={a.tangent_refinements}; median of {a.repeat} warm runs\n"
    )
    head = (
        f"{'steps':>7} {'ckpt':>5} {'fwd run (s)':>12} {'grad run (s)':>13} {'grad/fwd':>9} {'min/min':>8} "
        f"{'grad temp (MB)':>15} {'fwd compile':>12} {'grad compile':>13}"
    )
    print(head + "\n" + "-" * len(head))
    for r in rows:
        print(
            f"{r['steps']:>7} {'yes' if r['checkpoint'] else 'no':>5} {r['forward_run_s']:>12.3f} "
            f"{r['grad_run_s']:>13.3f} {r['grad_over_forward']:>9.2f} {r['grad_over_forward_min']:>8.2f} "
            f"{r['grad_temp_mb']:>15.2f} "
            f"{r['forward_compile_s']:>12.1f} {r['grad_compile_s']:>13.1f}"
        )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(
                {
                    "jax_version": jax.__version__,
                    "device": dev.platform,
                    "newton": a.newton,
                    "tangent_refinements": a.tangent_refinements,
                    "rows": rows,
                },
                fh,
                indent=2,
            )


if __name__ == "__main__":
    main()
