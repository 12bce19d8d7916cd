"""Time to first answer: compile times of flexjax's programs, per model.

For each model, a fresh process with an empty persistent compilation cache measures

- `compile_forward_s_<model>`: the first `simulate` (or `simulate_ode`) call minus the
  same call once compiled (the run itself);
- `rebuilt_call_s_<model>`: a call on a `System` built again by the same builder
  (equal structure, new Python objects and lambdas): no compile, about the run time;
- `compile_grad_s_<model>`: the first `jax.grad` of a scalar of the run with respect to
  a model parameter, minus the second (over a short horizon);
- `compile_batch_s_<model>`: `run_batch`'s compile time of one chunk (`BatchInfo.compile_s`);
- `hlo_ops_forward_<model>`: instructions in the optimized HLO of the forward program;

then a second fresh process, with the cache the first one filled, measures
`cached_first_call_s_<model>`: its first forward call, run included (tracing and
lowering still happen; XLA's compile is loaded from the cache). `run_s_<model>` is the
compiled run's time. Models: a rigid pendulum, a flexible slider-crank (26 coordinates,
2000 steps), the two-link clearance arm (seed 002, ideal elbow), the FLFJ arm under PD
control (seed 000, `simulate_ode`) and the flexible parallel robot (seed 001).

    python benchmarks/bench_compile.py [--quick] [--json FILE] [--models a,b]

`--quick`: the pendulum and the slider-crank only. Wall times on this machine; each
number is one measurement in a cold process (compile times do not repeat in a process).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MODELS = ("pendulum", "slider_crank", "clearance_arm", "flfj_arm", "parallel_robot")
QUICK = ("pendulum", "slider_crank")


def _model(name):
    """`(build(p) -> System, run(system, horizon) -> Trajectory, p0, horizon, grad_horizon,
    scalar(traj))` of one benchmark model; `p` is the differentiated parameter."""
    import equinox as eqx
    import jax.numpy as jnp

    import flexjax as fj
    import flexjax.models as models

    if name == "pendulum":
        build = lambda p: models.pendulum(length=p)
        run = lambda s, t1: fj.simulate(s, *models.pendulum_state(0.3, s.bodies[0].length), t1, 1e-3, save_every=10)
        return build, run, 1.0, 1.0, 0.1, lambda tr: tr.q[-1, 2]
    if name == "slider_crank":
        from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

        build = lambda p: flexible_slider_crank(omega=p)
        run = lambda s, t1: fj.simulate(s, *flexible_slider_crank_state(s), t1, 1e-4, save_every=10)
        return build, run, 150.0, 0.2, 0.02, lambda tr: tr.q[-1, -2]
    if name == "clearance_arm":
        from flexjax.models.clearance_arm import clearance_arm, simulate_arm

        build = lambda p: clearance_arm(youngs=p)
        run = lambda s, t1: simulate_arm(s, t1, 1e-4, save_every=10)
        return build, run, 30e9, 0.2, 0.01, lambda tr: tr.q[-1, -4]
    if name == "flfj_arm":
        from flexjax.control.pd import PD, CoordinateControl
        from flexjax.control.references import Ramp
        from flexjax.models.flfj_arm import KD, flfj_arm

        def build(kp):  # the flfj_control plant (k = 1 N m/rad) under PD on a 1 rad, 1 s ramp
            return fj.System([flfj_arm(1.0)], [], [CoordinateControl(0, 0, PD(kp, KD, Ramp(1.0, 1.0)))])

        def run(s, t1):
            n = s.nq
            return fj.simulate_ode(
                s, jnp.zeros(n), jnp.zeros(n), t1, rtol=1e-8, atol=1e-10, ts=jnp.linspace(0.0, t1, 101)
            )

        return build, run, 0.6, 2.0, 0.5, lambda tr: tr.q[-1, 0]
    if name == "parallel_robot":
        from flexjax.bodies import AncfBeam3D
        from flexjax.models.parallel_robot import parallel_robot, simulate_parallel_robot

        base = parallel_robot()  # the builder checks the workspace on concrete numbers
        rods = lambda s: [b.youngs for b in s.bodies if isinstance(b, AncfBeam3D)]
        build = lambda p: eqx.tree_at(rods, base, [jnp.asarray(p, float)] * len(rods(base)))
        run = lambda s, t1: simulate_parallel_robot(s, t1, 0.002)
        return build, run, 116e9, 0.1, 0.01, lambda tr: tr.q[-1, -3]
    raise ValueError(f"unknown model {name!r}; choose from {MODELS}")


def _timed(f):
    import jax

    t = time.perf_counter()
    out = f()
    jax.block_until_ready(out)
    return time.perf_counter() - t, out


def _hlo_ops(build, run, p0, horizon):
    import jax

    compiled = jax.jit(lambda p: run(build(p), horizon).q).lower(p0).compile()
    return sum(1 for line in compiled.as_text().splitlines() if " = " in line)


def worker(name: str, cached_only: bool) -> dict:
    """Measurements of one model in this (fresh) process."""
    import jax

    import flexjax as fj

    build, run, p0, horizon, grad_horizon, scalar = _model(name)
    out = {}
    first, _ = _timed(lambda: run(build(p0), horizon).q)
    if cached_only:
        return {f"cached_first_call_s_{name}": first}
    again, _ = _timed(lambda: run(build(p0), horizon).q)
    rebuilt, _ = _timed(lambda: run(build(p0), horizon).q)
    out[f"run_s_{name}"] = again
    out[f"compile_forward_s_{name}"] = max(first - again, 0.0)
    out[f"rebuilt_call_s_{name}"] = rebuilt
    loss = lambda p: scalar(run(build(p), grad_horizon))
    g1, _ = _timed(lambda: jax.grad(loss)(p0))
    g2, _ = _timed(lambda: jax.grad(loss)(p0))
    out[f"compile_grad_s_{name}"] = max(g1 - g2, 0.0)
    samples = p0 * (1.0 + 0.01 * jax.numpy.arange(4.0))
    _, info = fj.run_batch(loss, samples, chunk_size=4, return_info=True)
    out[f"compile_batch_s_{name}"] = info.compile_s
    out[f"hlo_ops_forward_{name}"] = _hlo_ops(build, run, p0, horizon)
    return out


def _spawn(name: str, cache: str, cached_only: bool) -> dict:
    env = dict(os.environ, FLEXJAX_CACHE_DIR=cache)
    env.pop("FLEXJAX_NO_CACHE", None)
    cmd = [sys.executable, __file__, "--worker", name] + ["--cached"] * cached_only
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{name}: worker failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--models", default=None, help="comma-separated subset of " + ",".join(MODELS))
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cached", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.cached)))
        return 0
    names = args.models.split(",") if args.models else (QUICK if args.quick else MODELS)
    import jax

    results = {"jax_version": jax.__version__, "device": str(jax.devices()[0]), "cpu_count": os.cpu_count()}
    print(
        f"{'model':16s} {'forward':>8s} {'grad':>8s} {'batch':>8s} {'rebuilt':>8s} "
        f"{'cached':>8s} {'run':>8s} {'HLO ops':>8s}"
    )
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            r = _spawn(name, cache, False)
            r.update(_spawn(name, cache, True))
        results.update(r)
        get = lambda k, r=r, name=name: r.get(f"{k}_{name}", float("nan"))
        print(
            f"{name:16s} {get('compile_forward_s'):8.2f} {get('compile_grad_s'):8.2f} {get('compile_batch_s'):8.2f} "
            f"{get('rebuilt_call_s'):8.3f} {get('cached_first_call_s'):8.2f} {get('run_s'):8.3f} "
            f"{get('hlo_ops_forward'):8.0f}",
            flush=True,
        )
    print(
        "seconds; forward/grad/batch: compile beyond the run; rebuilt: a call on a rebuilt System; "
        "cached: first call in a new process with the persistent cache (run included)"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
