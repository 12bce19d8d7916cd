"""The Newton strategy on several models: the default `GeneralizedAlpha()` (`newton="auto"`,
a kept Newton matrix formed anew when the measured contraction says it pays) against
`newton="full"` (a new matrix at every iteration).

    python benchmarks/bench_newton.py [--models sc4,sc8,pend16,pend64,arm,robot] [--repeat 5] [--json FILE]

Each model runs in a fresh interpreter. Both strategies are compiled first
(`eqx.filter_jit`, first call), then their warm runs alternate, `--repeat` times each,
so that both see the same machine load; the table gives the medians, the ratio
auto / full, the Newton iterations and matrices per step (`StepInfo`, from a separate
step loop) and the largest difference of the final coordinates. Models:

- `sc4`, `sc8`: the flexible slider-crank (`flexjax.models.flexible_slider_crank`, crank
  at 150 rad/s, 4 / 8 ANCF elements), h = 0.1 ms, 0.2 s, rho_inf = 0.9;
- `pend16`, `pend64`: the very flexible ANCF pendulum of `bench_peers.py` (16 / 64
  elements, pinned, released straight), h = 1 ms, 1 s, rho_inf = 0.8;
- `arm`: the seed-002 two-link ANCF arm with its clearance elbow and PID torques
  (`flexjax.models.clearance_arm`), h = 0.1 ms, 0.2 s, rho_inf = 0.8;
- `robot`: the flexible parallel robot (`flexjax.models.parallel_robot`, 336
  coordinates), h = 2 ms, 0.1 s, rho_inf = 0.7.

JSON: one flat object with `run_s_<strategy>_<model>`, `auto_over_full_<model>`,
`iterations_per_step_<strategy>_<model>`, `matrices_per_step_<strategy>_<model>`,
`max_dq_<model>` (m) and the load average at start and end.
"""

import argparse
import json
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile is not what is timed, but keep runs independent
import statistics
import subprocess
import sys
import time

MODELS = ("sc4", "sc8", "pend16", "pend64", "arm", "robot")
STRATEGIES = ("full", "auto")


def model(name):
    """`(system, q0, v0, t1, h, rho_inf, simulate_kwargs)` of one benchmark model."""
    import jax.numpy as jnp

    import flexjax as fj

    if name.startswith("sc"):
        from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

        s = flexible_slider_crank(n_elements=int(name[2:]))
        return (s, *flexible_slider_crank_state(s), 0.2, 1e-4, 0.9, {})
    if name.startswith("pend"):
        from flexjax.joints.ancf import AncfPin

        beam = fj.AncfBeam2D(
            1.2, 5540.0, 0.0018, 1.215e-8, 0.7e6, int(name[4:]), strain="stretch", axial_order=5, bending_order=3
        )
        s = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -9.81))])
        q0 = beam.straight_coordinates()
        return s, q0, jnp.zeros_like(q0), 1.0, 1e-3, 0.8, dict(consistent=False)
    if name == "arm":
        from flexjax.models.clearance_arm import clearance_arm, clearance_arm_state

        s = clearance_arm()
        return (s, *clearance_arm_state(s), 0.2, 1e-4, 0.8, dict(consistent=False))
    if name == "robot":
        from flexjax.models.parallel_robot import initial_state, parallel_robot

        s = parallel_robot()
        return (s, *initial_state(s), 0.1, 0.002, 0.7, {})
    raise ValueError(f"unknown model {name!r}; choose from {MODELS}")


def worker(name, repeat):
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import numpy as np

    import flexjax as fj

    system, q0, v0, t1, h, rho_inf, kw = model(name)
    steps = round(t1 / h)
    solvers = {k: fj.GeneralizedAlpha(rho_inf=rho_inf, newton=k) for k in STRATEGIES}
    runs = {
        k: eqx.filter_jit(
            lambda s, solver=solvers[k]: fj.simulate(s, q0, v0, t1, h, solver=solver, save_every=steps, **kw).q[-1]
        )
        for k in STRATEGIES
    }

    def counts(solver):  # Newton iterations and matrices of every step
        def one(state, k):
            state, info = solver.step(system, k * h, h, state)
            return state, (info.iterations, info.jacobians)

        state = solver.init(system, 0.0, q0, v0)
        return jax.lax.scan(one, state, jnp.arange(steps))[1]

    out, final = {}, {}
    for k in STRATEGIES:
        final[k] = np.asarray(jax.block_until_ready(runs[k](system)))
        it, nj = eqx.filter_jit(counts)(solvers[k])
        out[f"iterations_per_step_{k}_{name}"] = float(np.mean(it))
        out[f"matrices_per_step_{k}_{name}"] = float(np.mean(nj))
    times = {k: [] for k in STRATEGIES}
    for _ in range(repeat):
        for k in STRATEGIES:
            t = time.perf_counter()
            jax.block_until_ready(runs[k](system))
            times[k].append(time.perf_counter() - t)
    for k in STRATEGIES:
        out[f"run_s_{k}_{name}"] = statistics.median(times[k])
    out[f"auto_over_full_{name}"] = out[f"run_s_auto_{name}"] / out[f"run_s_full_{name}"]
    out[f"max_dq_{name}"] = float(np.max(np.abs(final["auto"] - final["full"])))
    out[f"nq_{name}"] = system.nq
    out[f"steps_{name}"] = steps
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.repeat)))
        return
    result = {"load_start": os.getloadavg()[0]}
    print(
        f"{'model':8s} {'nq':>4s} {'steps':>6s} {'full (s)':>9s} {'auto (s)':>9s} {'auto/full':>9s} "
        f"{'it/step f/a':>12s} {'mat/step f/a':>13s} {'max |dq|':>9s}"
    )
    for name in a.models.split(","):
        cmd = [sys.executable, __file__, "--worker", name, "--repeat", str(a.repeat)]
        r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
        result.update(r)
        g = lambda key, r=r, name=name: r[f"{key}_{name}"]
        print(
            f"{name:8s} {g('nq'):4d} {g('steps'):6d} {g('run_s_full'):9.3f} {g('run_s_auto'):9.3f} "
            f"{g('auto_over_full'):9.2f} {g('iterations_per_step_full'):5.2f}/{g('iterations_per_step_auto'):5.2f} "
            f"{g('matrices_per_step_full'):6.2f}/{g('matrices_per_step_auto'):5.3f} {g('max_dq'):9.1e}",
            flush=True,
        )
    result["load_end"] = os.getloadavg()[0]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
