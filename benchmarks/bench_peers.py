"""Peer benchmark: flexjax against Exudyn on the same planar ANCF problems, in one run.

Run standalone (see benchmarks/README.md); Exudyn is needed only here (`pip install ".[bench]"`):

    python benchmarks/bench_peers.py                          # (a) 8,16,32,64 elements, (b) 64,1024, (c), gradient
    python benchmarks/bench_peers.py --quick --json peers.json  # (a) 16 elements, (b) 64 samples, gradient

Both codes use the same element: the planar gradient-deficient ANCF cable
(`flexjax.AncfBeam2D` / Exudyn `ObjectANCFCable2D`) with the axial strain
$\\varepsilon = |r'| - 1$ and the curvature $\\kappa = (r' \\times r'')/|r'|^2$ (flexjax
`strain="stretch"`), integrated with the same Gauss rules (Exudyn's default
`useReducedOrderIntegration=0`: 5 points for the axial term, 3 for the bending term;
flexjax `axial_order=5, bending_order=3`). The first node is pinned at the origin (flexjax
`AncfPin`, Exudyn coordinate constraints on the node's x and y), gravity acts along -y, the
beam starts straight along +x at rest. Both integrate with generalized-alpha (index 3, the
same rho_inf), fixed step h, to the same end time. Both use modified Newton (the Newton
matrix kept across iterations and steps until convergence slows): flexjax
`GeneralizedAlpha(newton="modified")` with its default tolerance 1e-10 (position
increment; `--newton full` for a fresh matrix every iteration), Exudyn its default
with relative residual tolerance 1e-8.

(a) single trajectory: the very flexible pendulum (L = 1.2 m, A = 0.0018 m^2,
    I = 1.215e-8 m^4, rho = 5540 kg/m^3, E = 0.7 MPa, g = 9.81, 1 s) with `--elements`
    elements. flexjax: `jax.jit(f).lower(E).compile()` is the compile time; the run time is
    the median of `--repeat` warm calls (only the final state is saved). Exudyn: build +
    `Assemble` is reported as setup; the run time is the median of `--repeat`
    `SolveDynamic` calls. The tips at the end time must agree within `--tol` (m).
(b) batch: a stiff steel ANCF pendulum (L = 1 m, 1 cm x 1 cm, rho = 7850 kg/m^3,
    E = 210 GPa +-10 % Latin hypercube samples, 4 elements, `--batch-steps` steps of
    `--batch-dt`). flexjax: one `flexjax.run_batch` (vmap; compile = `BatchInfo.compile_s`,
    run = median of `--repeat` warm calls), by default with one Newton matrix per device
    batch, formed at its mean sample with its first-order change in E
    (`GeneralizedAlpha(shared_matrix=True)`; `--no-shared-matrix`: one per sample) and
    turned with the swinging beam (`GeneralizedAlpha(corotate=True)`; `--no-corotate`), the
    samples run in similarity order (`run_batch(order_by_similarity=True)`:
    each device gets the neighbouring half of the E range; `--no-order-by-similarity`:
    the drawn order). Exudyn: one system, E set per sample (`SetObjectParameter` +
    `Assemble`) and `SolveDynamic` in a Python loop, median of `--repeat` passes. The
    flexjax batch and the Exudyn pass are timed in turn, so that both see the same
    machine load.
(c) spin-up: the Simo & Vu-Quoc cantilever (L = 10 m, EA = 2.8e7 N, EI = 1.4e4 N m^2,
    rho A = 1.2 kg/m) as `--spinup-elements` ANCF elements whose first node is pinned at
    the hub axis and whose first slope follows the prescribed hub angle (the spin-up
    profile of flexjax/models/spinup_beam.py, omega_s = `--spinup-omega`, T_s = 15 s), to
    `--spinup-t-end`, step `--spinup-dt`; no gravity. flexjax/experiments/spinup.py itself uses
    the modal hub beam (`ModalHubBeam`, with the w_c stiffening term) and an adaptive ODE
    solver, for which Exudyn has no counterpart; the ANCF cable carries geometric
    stiffening by itself. In Exudyn the slope is driven by two `CoordinateConstraint`s
    with Python offset user functions (called from C++ at every residual evaluation).
    Skipped by `--quick`.
(g) gradient: d(tip x at the end)/dE of the stiff pendulum over `--grad-steps` steps of
    `--grad-dt` (`flexjax.simulate`, reverse mode) against the forward run, each
    AOT-compiled; the gradient is checked against a central difference.

`--blas-threads 1` (the default) reruns the script with OPENBLAS_NUM_THREADS (and the
OpenMP/MKL equivalents) set to 1, like Exudyn's single-threaded default: on a small shared
CPU, threaded OpenBLAS LU factorizations of the Newton matrix are 10-100x slower.
The machine load (`os.getloadavg()`) is recorded before and after, since all times are
wall times, and so is the thread wake-up round trip within a core and between two cores
(`wake_roundtrip_us`): the cost of the thread hand-offs in XLA's CPU runtime, which a
short batch like (b) at N = 64 pays once or twice per Newton iteration. `--json FILE`
writes one flat JSON object (the keys `single_time_ratio_<n>`,
`batch_throughput_ratio_<N>`, `grad_over_forward` and every raw time).
"""

import argparse
import json
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache
import platform
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from bench_batch import _table  # same printed-table layout as the batch benchmark
from bench_grad import time_alternating  # forward and gradient timed in turn, as there

import flexjax as fj
from flexjax.batch import run_batch
from flexjax.joints.ancf import AncfPin

G = 9.81
# (a) the very flexible pendulum (flexjax/models/flexible_pendulum.py)
FLEX = dict(length=1.2, area=0.0018, second_moment=1.215e-8, rho=5540.0, youngs=0.7e6)
# (b) and the gradient: a stiff steel pendulum, 1 cm x 1 cm section
STIFF = dict(length=1.0, area=1e-4, second_moment=1e-8 / 12, rho=7850.0, youngs=210e9)
STIFF_ELEMENTS = 4
# (c) spin-up of a cantilever clamped to a hub on its axis (Simo & Vu-Quoc 1986, the beam of
# flexjax/models/spinup_beam.py): EA = 2.8e7 N, EI = 1.4e4 N m^2, rho A = 1.2 kg/m, as A = 1 m^2
SPIN = dict(length=10.0, area=1.0, second_moment=1.4e4 / 2.8e7, rho=1.2, youngs=2.8e7)
SPIN_TS = 15.0  # s, end of the spin-up
AXIAL_ORDER, BENDING_ORDER = 5, 3  # Exudyn useReducedOrderIntegration=0: Gauss orders 9 and 5


# -- flexjax side ------------------------------------------------------------------------
def flexjax_tip(p, n, t1, h, rho_inf, newton="modified", shared_matrix=False, corotate=False):
    """`f(E) -> (tip (2,), max Newton iterations, success)`: the pinned beam `p` with `n`
    elements simulated to `t1` with `GeneralizedAlpha(newton=newton)`, saving only the
    final state."""
    steps = round(t1 / h)
    modified = newton == "modified"
    solver = fj.GeneralizedAlpha(
        rho_inf=rho_inf, newton=newton, shared_matrix=shared_matrix and modified, corotate=corotate and modified
    )

    def f(youngs):
        beam = fj.AncfBeam2D(
            p["length"],
            p["rho"],
            p["area"],
            p["second_moment"],
            youngs,
            n,
            strain="stretch",
            axial_order=AXIAL_ORDER,
            bending_order=BENDING_ORDER,
        )
        system = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -G))])
        q0 = beam.straight_coordinates()
        tr = fj.simulate(
            system, q0, jnp.zeros_like(q0), t1, h, solver=solver, save_every=steps, consistent=False, throw=False
        )
        return beam.node_position(tr.q[-1], -1), jnp.max(tr.newton_iterations), tr.succeeded

    return f


def _aot(fn, *args):
    t = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - t


def _median_run(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = jax.block_until_ready(fn())
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


# -- machine diagnostic -----------------------------------------------------------------------
# Run in a fresh interpreter: forking this process, whose JAX runtime has threads, is unsafe.
_ROUNDTRIP = r"""
import os, statistics, sys, time
a, b, n = (int(x) for x in sys.argv[1:4])
ping, pong = os.pipe(), os.pipe()
if os.fork() == 0:
    os.sched_setaffinity(0, {b})
    for _ in range(n):
        os.read(ping[0], 1)
        os.write(pong[1], b"x")
    os._exit(0)
os.sched_setaffinity(0, {a})
times = []
for _ in range(n):
    t = time.perf_counter()
    os.write(ping[1], b"x")
    os.read(pong[0], 1)
    times.append(time.perf_counter() - t)
os.wait()
print(statistics.median(times) * 1e6)
"""


def wake_roundtrip_us(cross_core, n=2000):
    """Median round trip (us) of a one-byte message between two processes pinned to the
    first core this process may use (`cross_core=False`) or to its first two cores,
    through pipes: each message wakes the blocked other process, so it measures two
    thread wake-ups, Python's own overhead included (compare the two). XLA's CPU runtime
    hands kernels between threads inside every loop iteration, so where a wake-up on
    another core is slow (on a virtual machine, waking a virtual CPU can exit to the
    hypervisor) a short batch run pays for it once or twice per Newton iteration. None
    without CPU affinity (non-Linux) or, for `cross_core`, with one core."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if cross_core and len(cores) < 2:
        return None
    pair = (cores[0], cores[1] if cross_core else cores[0])
    out = subprocess.run(
        [sys.executable, "-c", _ROUNDTRIP, *map(str, pair), str(n)], capture_output=True, text=True, timeout=60
    )
    return float(out.stdout) if out.returncode == 0 else None


# -- Exudyn side (imported lazily: never a flexjax dependency) --------------------------------
def _exudyn():
    try:
        import exudyn
    except ImportError:
        sys.exit("bench_peers.py needs Exudyn: pip install exudyn (or the project's `bench` extra)")
    return exudyn


def exudyn_settings(t1, h, rho_inf):
    """Exudyn's generalized-alpha (index 3) with its defaults except the spectral radius,
    a fixed step `h` and the end time `t1`; no solution files or console output."""
    ss = _exudyn().SimulationSettings()
    ti = ss.timeIntegration
    ti.numberOfSteps, ti.endTime = round(t1 / h), t1
    ti.generalizedAlpha.spectralRadius = rho_inf  # index 3 (useIndex2Constraints=False), as flexjax
    ti.adaptiveStep = False  # fixed step, as flexjax: a failed step is an error, not a halved step
    ti.verboseMode = 0
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = 1e9
    ss.show.computationTime = False
    ss.show.statistics = False
    return ss


class ExudynPendulum:
    """The pinned ANCF cable pendulum in Exudyn, built once; `solve(E)` resets and runs it."""

    def __init__(self, p, n, t1, h, rho_inf):
        exu = _exudyn()
        import exudyn.beams as beams
        import exudyn.itemInterface as eii

        self.exu, self.p = exu, p
        t = time.perf_counter()
        self.sc = exu.SystemContainer()
        self.mbs = self.sc.AddSystem()
        E = p["youngs"]
        cable = eii.ObjectANCFCable2D(
            massPerLength=p["rho"] * p["area"],
            bendingStiffness=E * p["second_moment"],
            axialStiffness=E * p["area"],
            useReducedOrderIntegration=0,
        )
        self.info = beams.GenerateBeamElementsAlongLine(
            self.mbs, [0, 0, 0], [p["length"], 0, 0], n, cable, gravity=[0, -G, 0], groundConstraintsStart=[1, 1, 0, 0]
        )
        self.mbs.Assemble()
        self.setup_s = time.perf_counter() - t
        self.settings = exudyn_settings(t1, h, rho_inf)

    def solve(self, youngs=None):
        """Run from the straight initial state; returns the tip (x, y) at the end time."""
        if youngs is not None:
            for o in self.info["elements"]:
                self.mbs.SetObjectParameter(o, "axialStiffness", youngs * self.p["area"])
                self.mbs.SetObjectParameter(o, "bendingStiffness", youngs * self.p["second_moment"])
            self.mbs.Assemble()  # also resets the state to the initial coordinates
        if not self.mbs.SolveDynamic(self.settings):
            raise RuntimeError("Exudyn SolveDynamic failed")
        return np.asarray(self.mbs.GetNodeOutput(self.info["nodes"][-1], self.exu.OutputVariableType.Position))[:2]


# -- (a) single trajectory ---------------------------------------------------------------------
def bench_single(n, a):
    f = flexjax_tip(FLEX, n, a.t_end, a.dt, a.rho_inf, a.newton)
    E = jnp.asarray(FLEX["youngs"])
    compiled, compile_s = _aot(f, E)
    jax.block_until_ready(compiled(E))  # first execution allocates; not timed
    fj_run, (tip, iters, ok) = _median_run(lambda: compiled(E), a.repeat)

    ex = ExudynPendulum(FLEX, n, a.t_end, a.dt, a.rho_inf)
    times = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        ex_tip = ex.solve()
        times.append(time.perf_counter() - t)
    ex_run = statistics.median(times)
    tip = np.asarray(tip)
    diff = float(np.linalg.norm(tip - ex_tip))
    return {
        "elements": n,
        "nq": 4 * (n + 1),
        "steps": round(a.t_end / a.dt),
        "flexjax_compile_s": compile_s,
        "flexjax_run_s": fj_run,
        "exudyn_setup_s": ex.setup_s,
        "exudyn_run_s": ex_run,
        "time_ratio": fj_run / ex_run,
        "flexjax_tip_x": float(tip[0]),
        "flexjax_tip_y": float(tip[1]),
        "exudyn_tip_x": float(ex_tip[0]),
        "exudyn_tip_y": float(ex_tip[1]),
        "tip_diff": diff,
        "flexjax_newton_max": int(iters),
        "flexjax_ok": bool(ok),
        "agree": diff <= a.tol,
    }


# -- (b) batch -----------------------------------------------------------------------------------
def _samples(n, seed):
    """Latin hypercube in E0 (1 +- 10 %)."""
    rng = np.random.default_rng(seed)
    u = (rng.permutation(n) + rng.random(n)) / n
    return STIFF["youngs"] * (0.9 + 0.2 * u)


def bench_batch(n, a, fn):
    E = _samples(n, a.seed)
    chunk = min(n, a.chunk_size)
    kw = dict(chunk_size=chunk, order_by_similarity=a.order_by_similarity)
    out, info = run_batch(fn, E, return_info=True, **kw)
    ex = ExudynPendulum(STIFF, STIFF_ELEMENTS, a.batch_steps * a.batch_dt, a.batch_dt, a.rho_inf)
    fj_times, ex_times = [], []
    for _ in range(a.repeat):  # flexjax batch and Exudyn pass in turn: both see the same machine load
        t = time.perf_counter()
        out = run_batch(fn, E, **kw)
        fj_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ex_tips = np.stack([ex.solve(float(e)) for e in E])
        ex_times.append(time.perf_counter() - t)
    fj_run, ex_run = statistics.median(fj_times), statistics.median(ex_times)
    diff = float(np.max(np.linalg.norm(out["tip"] - ex_tips, axis=1)))
    return {
        "n": n,
        "chunk": info.chunk_size,
        "devices": info.ndevices,
        "flexjax_compile_s": info.compile_s,
        "flexjax_run_s": fj_run,
        "flexjax_samples_per_s": n / fj_run,
        "exudyn_setup_s": ex.setup_s,
        "exudyn_run_s": ex_run,
        "exudyn_samples_per_s": n / ex_run,
        "throughput_ratio": ex_run / fj_run,
        "tip_diff_max": diff,
        "all_ok": bool(np.all(out["ok"])),
        "agree": diff <= a.tol,
    }


def batch_fn(a):
    f = flexjax_tip(
        STIFF, STIFF_ELEMENTS, a.batch_steps * a.batch_dt, a.batch_dt, a.rho_inf, a.newton, a.shared_matrix, a.corotate
    )

    def fn(youngs):
        tip, _, ok = f(youngs)
        return {"tip": tip, "ok": ok}

    return fn


# -- (g) gradient ----------------------------------------------------------------------------------
def bench_gradient(a):
    f = flexjax_tip(STIFF, STIFF_ELEMENTS, a.grad_steps * a.grad_dt, a.grad_dt, a.rho_inf, a.newton)
    loss = lambda youngs: f(youngs)[0][0]  # tip x at the end
    E = jnp.asarray(STIFF["youngs"])
    fwd, fwd_compile = _aot(loss, E)
    grad, grad_compile = _aot(jax.grad(loss), E)
    x, g = jax.block_until_ready((fwd(E), grad(E)))
    fwd_times, grad_times = time_alternating((fwd, grad), E, a.repeat)
    fwd_run, grad_run = statistics.median(fwd_times), statistics.median(grad_times)
    dE = 1e-4 * STIFF["youngs"]
    fd = (float(fwd(E + dE)) - float(fwd(E - dE))) / (2 * dE)
    return {
        "grad_steps": a.grad_steps,
        "grad_dt": a.grad_dt,
        "forward_compile_s": fwd_compile,
        "forward_run_s": fwd_run,
        "grad_compile_s": grad_compile,
        "grad_run_s": grad_run,
        "grad_over_forward": grad_run / fwd_run,
        "tip_x": float(x),
        "grad_value": float(g),
        "grad_fd": fd,
        "grad_fd_rel_error": abs(float(g) - fd) / abs(fd),
    }


# -- (c) spin-up ------------------------------------------------------------------------------
def hub_angle(t, omega_s, ts=SPIN_TS, xp=np):
    r"""Prescribed hub angle (rad): $\frac{\omega_s}{T_s}(\frac{t^2}{2} + (\frac{T_s}{2\pi})^2
    (\cos\frac{2\pi t}{T_s} - 1))$ up to $T_s$, $\omega_s(t - T_s/2)$ after (`xp`: np or jnp)."""
    up = omega_s / ts * (t**2 / 2 + (ts / (2 * np.pi)) ** 2 * (xp.cos(2 * np.pi * t / ts) - 1))
    return xp.where(t <= ts, up, omega_s * (t - ts / 2))


def flexjax_spinup(n, t1, h, rho_inf, omega_s, newton="modified"):
    r"""`f() -> tip (2,)`: node 0 pinned at the hub axis, its slope driven to
    $(\cos\theta(t), \sin\theta(t))$ (a clamp on the prescribed hub), no gravity."""
    from flexjax.joints.driving import DrivingConstraint

    steps = round(t1 / h)
    p = SPIN

    theta = lambda t: hub_angle(t, omega_s, xp=jnp)

    def f():
        beam = fj.AncfBeam2D(
            p["length"],
            p["rho"],
            p["area"],
            p["second_moment"],
            p["youngs"],
            n,
            strain="stretch",
            axial_order=AXIAL_ORDER,
            bending_order=BENDING_ORDER,
        )
        slope = DrivingConstraint(0, lambda q: q[2:4], lambda t: jnp.stack([jnp.cos(theta(t)), jnp.sin(theta(t))]), 2)
        system = fj.System([beam], [AncfPin(0, 0), slope])
        q0 = beam.straight_coordinates()
        tr = fj.simulate(
            system,
            q0,
            jnp.zeros_like(q0),
            t1,
            h,
            solver=fj.GeneralizedAlpha(rho_inf=rho_inf, newton=newton),
            save_every=steps,
            consistent=False,
            throw=False,
        )
        return beam.node_position(tr.q[-1], -1), tr.succeeded

    return f


def exudyn_spinup(n, t1, h, rho_inf, omega_s):
    """The same in Exudyn: coordinate constraints on node 0 (position fixed; slope
    displacement $(\cos\theta - 1, \sin\theta)$ by Python offset user functions).
    Returns `(setup_s, solve)` with `solve() -> tip (2,)`."""
    exu = _exudyn()
    import exudyn.beams as beams
    import exudyn.itemInterface as eii

    t = time.perf_counter()
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    p = SPIN
    cable = eii.ObjectANCFCable2D(
        massPerLength=p["rho"] * p["area"],
        bendingStiffness=p["youngs"] * p["second_moment"],
        axialStiffness=p["youngs"] * p["area"],
        useReducedOrderIntegration=0,
    )
    info = beams.GenerateBeamElementsAlongLine(
        mbs, [0, 0, 0], [p["length"], 0, 0], n, cable, groundConstraintsStart=[1, 1, 0, 0]
    )
    ground = mbs.AddNode(eii.NodePointGround(referenceCoordinates=[0, 0, 0]))
    m_ground = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    # coordinate constraints act on displacements from the reference slope (1, 0)
    offsets = (
        lambda mbs, t, i, o: float(np.cos(hub_angle(t, omega_s))) - 1.0,
        lambda mbs, t, i, o: float(np.sin(hub_angle(t, omega_s))),
    )
    for coord, uf in zip((2, 3), offsets, strict=False):
        m = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=info["nodes"][0], coordinate=coord))
        mbs.AddObject(eii.CoordinateConstraint(markerNumbers=[m_ground, m], offsetUserFunction=uf))
    mbs.Assemble()
    setup_s = time.perf_counter() - t
    ss = exudyn_settings(t1, h, rho_inf)
    # started at rest without loads, the initial residual is ~0 and the default absolute
    # tolerance (1e-10 N) is below round-off of the axial forces (EA = 2.8e7 N): Newton stalls
    ss.timeIntegration.newton.absoluteTolerance = 1e-6

    def solve():
        mbs.Assemble()
        if not mbs.SolveDynamic(ss):
            raise RuntimeError("Exudyn SolveDynamic failed")
        return np.asarray(mbs.GetNodeOutput(info["nodes"][-1], exu.OutputVariableType.Position))[:2]

    return setup_s, solve


def bench_spinup(a):
    n, t1, h = a.spinup_elements, a.spinup_t_end, a.spinup_dt
    compiled, compile_s = _aot(flexjax_spinup(n, t1, h, a.rho_inf, a.spinup_omega, a.newton))
    jax.block_until_ready(compiled())
    fj_run, (tip, ok) = _median_run(compiled, a.repeat)
    setup_s, solve = exudyn_spinup(n, t1, h, a.rho_inf, a.spinup_omega)
    times = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        ex_tip = solve()
        times.append(time.perf_counter() - t)
    ex_run = statistics.median(times)
    tip = np.asarray(tip)
    th = float(hub_angle(t1, a.spinup_omega))
    deflection = lambda r: float(-np.sin(th) * r[0] + np.cos(th) * r[1])  # hub-frame transverse tip
    diff = float(np.linalg.norm(tip - ex_tip))
    return {
        "elements": n,
        "steps": round(t1 / h),
        "t_end": t1,
        "dt": h,
        "omega_s": a.spinup_omega,
        "flexjax_compile_s": compile_s,
        "flexjax_run_s": fj_run,
        "exudyn_setup_s": setup_s,
        "exudyn_run_s": ex_run,
        "time_ratio": fj_run / ex_run,
        "flexjax_tip_deflection": deflection(tip),
        "exudyn_tip_deflection": deflection(ex_tip),
        "tip_diff": diff,
        "flexjax_ok": bool(ok),
        "agree": diff <= a.tol,
    }


# -- report ------------------------------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ints = lambda s: [int(x) for x in s.split(",") if x.strip()]
    p.add_argument("--elements", type=ints, default=[8, 16, 32, 64], help="(a) element counts, comma-separated")
    p.add_argument("--dt", type=float, default=5e-4, help="(a) time step (s)")
    p.add_argument("--t-end", type=float, default=1.0, help="(a) end time (s)")
    p.add_argument("--rho-inf", type=float, default=0.9, help="generalized-alpha spectral radius (both codes)")
    p.add_argument(
        "--newton",
        choices=("modified", "full"),
        default="modified",
        help="flexjax Newton variant (GeneralizedAlpha(newton=...)); Exudyn runs its default modified Newton",
    )
    p.add_argument(
        "--shared-matrix",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="(b) with modified Newton, one Newton matrix per device batch (GeneralizedAlpha(shared_matrix=True))",
    )
    p.add_argument(
        "--corotate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="(b) with modified Newton, rotate the kept Newton matrix with the swinging beam "
        "(GeneralizedAlpha(corotate=True))",
    )
    p.add_argument(
        "--order-by-similarity",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="(b) run the samples sorted by E (run_batch(order_by_similarity=True)); results keep the drawn order",
    )
    p.add_argument("--batch", type=ints, default=[64, 1024], help="(b) sample counts, comma-separated")
    p.add_argument("--batch-steps", type=int, default=100, help="(b) steps per sample")
    p.add_argument("--batch-dt", type=float, default=1e-3, help="(b) time step (s)")
    p.add_argument("--chunk-size", type=int, default=1024, help="(b) largest flexjax chunk")
    p.add_argument("--spinup-elements", type=int, default=8, help="(c) elements")
    p.add_argument("--spinup-t-end", type=float, default=30.0, help="(c) end time (s)")
    p.add_argument("--spinup-dt", type=float, default=1e-3, help="(c) time step (s)")
    p.add_argument("--spinup-omega", type=float, default=4.0, help="(c) final hub speed omega_s (rad/s)")
    p.add_argument("--grad-steps", type=int, default=10_000, help="gradient: steps")
    p.add_argument("--grad-dt", type=float, default=1e-4, help="gradient: time step (s)")
    p.add_argument("--repeat", type=int, default=3, help="warm runs; the median is reported")
    p.add_argument("--tol", type=float, default=1e-6, help="agreement tolerance on the tip position (m)")
    p.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="OpenBLAS/OpenMP threads for flexjax's CPU LAPACK calls (default 1, as Exudyn's default "
        "single thread); 0 leaves the environment as it is",
    )
    p.add_argument(
        "--host-devices",
        type=int,
        default=os.cpu_count() or 1,
        help="split the CPU into K JAX devices (XLA_FLAGS=--xla_force_host_platform_device_count=K); "
        "(b) shards its samples over them with run_batch. Default: one per core. The single "
        "runs (a), (c) and the gradient use one device",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip", default="", help="comma-separated parts to skip: single,batch,spinup,grad")
    p.add_argument("--quick", action="store_true", help="(a) at 16 elements, (b) at 64 samples, the gradient")
    p.add_argument("--json", metavar="FILE", help="write one flat JSON object")
    a = p.parse_args(argv)
    a.skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    if a.quick:
        a.elements, a.batch = [16], [64]
        a.skip.add("spinup")
    if a.repeat < 1 or a.batch_steps < 1 or a.grad_steps < 1 or a.host_devices < 1 or not 0 <= a.rho_inf < 1:
        p.error(
            "--repeat, --batch-steps, --grad-steps, --host-devices must be >= 1 and 0 <= --rho-inf < 1 (index-3 Exudyn)"
        )
    return a


_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _rerun_with_environment(blas_threads, host_devices, argv, script=__file__):
    """Rerun this script with the BLAS thread variables set to `blas_threads` and the CPU
    split into `host_devices` JAX devices, when the environment differs: the first are
    read when OpenBLAS loads (at the numpy import), the second when JAX's CPU client
    starts, so neither can be changed in this process. On a small shared CPU, threaded
    OpenBLAS LU factorizations of the Newton matrix (n >~ 130) spin on busy cores and run
    10-100x slower than with one thread. `script`: the file to rerun (another benchmark
    that shares this option)."""
    env = dict(os.environ)
    if blas_threads > 0:
        env.update({v: str(blas_threads) for v in _BLAS_VARS})
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    if host_devices > 1:
        flags.append(f"--xla_force_host_platform_device_count={host_devices}")
    env["XLA_FLAGS"] = " ".join(flags)
    if all(env.get(k, "") == os.environ.get(k, "") for k in (*_BLAS_VARS, "XLA_FLAGS")):
        return
    args = sys.argv[1:] if argv is None else list(argv)
    os.execve(sys.executable, [sys.executable, os.path.abspath(script), *args], env)


def main(argv=None):
    a = parse_args(argv)
    _rerun_with_environment(a.blas_threads, a.host_devices, argv)
    exu = _exudyn()
    load_start = os.getloadavg()
    dev = jax.devices()[0]
    device = f"{dev.platform}:{dev.device_kind}"
    flat = {
        "flexjax_version": fj.__version__,
        "jax_version": jax.__version__,
        "exudyn_version": exu.__version__,
        "device": device,
        "devices": len(jax.devices()),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "dtype": "float64",
        "rho_inf": a.rho_inf,
        "newton": a.newton,
        "repeat": a.repeat,
        "tol": a.tol,
        "batch_shared_matrix": bool(a.shared_matrix and a.newton == "modified"),
        "host_devices": len(jax.devices()),
        "batch_order_by_similarity": bool(a.order_by_similarity),
        "batch_corotate": bool(a.corotate and a.newton == "modified"),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "load_avg_1min_start": load_start[0],
        "load_avg_5min_start": load_start[1],
        "wake_roundtrip_same_core_us": wake_roundtrip_us(cross_core=False),
        "wake_roundtrip_cross_core_us": wake_roundtrip_us(cross_core=True),
    }
    print(
        f"flexjax {fj.__version__}, jax {jax.__version__}, exudyn {exu.__version__}; device {device}, "
        f"{os.cpu_count()} CPU cores as {len(jax.devices())} JAX devices, float64, "
        f"OPENBLAS_NUM_THREADS={flat['openblas_num_threads']}; "
        f"generalized-alpha rho_inf={a.rho_inf}, flexjax newton={a.newton} "
        f"(batch shared_matrix={flat['batch_shared_matrix']}, corotate={flat['batch_corotate']}, "
        f"order_by_similarity={a.order_by_similarity}); "
        f"median of {a.repeat} runs; "
        f"load average {load_start[0]:.1f} (1 min) at start",
        flush=True,
    )
    us = lambda v: "n/a" if v is None else f"{v:.1f} us"
    print(
        f"thread wake-up round trip (two processes, pipes): same core {us(flat['wake_roundtrip_same_core_us'])}, "
        f"two cores {us(flat['wake_roundtrip_cross_core_us'])}",
        flush=True,
    )

    if "single" not in a.skip:
        rows = []
        for n in a.elements:
            rows.append(bench_single(n, a))
            print(
                f"  (a) {n} elements: flexjax {rows[-1]['flexjax_run_s']:.3f} s, "
                f"exudyn {rows[-1]['exudyn_run_s']:.3f} s",
                file=sys.stderr,
                flush=True,
            )
        print(
            f"\n(a) very flexible ANCF pendulum, {a.t_end:g} s, h = {a.dt:g} s "
            f"({round(a.t_end / a.dt)} steps); tip agreement tolerance {a.tol:g} m"
        )
        print(
            _table(
                rows,
                [
                    ("elements", lambda r: str(r["elements"])),
                    ("nq", lambda r: str(r["nq"])),
                    ("fj compile (s)", lambda r: f"{r['flexjax_compile_s']:.2f}"),
                    ("fj run (s)", lambda r: f"{r['flexjax_run_s']:.3f}"),
                    ("exu setup (s)", lambda r: f"{r['exudyn_setup_s']:.4f}"),
                    ("exu run (s)", lambda r: f"{r['exudyn_run_s']:.3f}"),
                    ("fj/exu time", lambda r: f"{r['time_ratio']:.1f}x"),
                    ("fj tip (x, y) m", lambda r: f"({r['flexjax_tip_x']:.7f}, {r['flexjax_tip_y']:.7f})"),
                    ("|tip fj - exu| m", lambda r: f"{r['tip_diff']:.1e}"),
                    ("agree", lambda r: "yes" if r["agree"] else "NO"),
                ],
            )
        )
        for r in rows:
            flat.update({f"single_{k}_{r['elements']}": v for k, v in r.items() if k != "elements"})
            flat[f"single_time_ratio_{r['elements']}"] = r["time_ratio"]

    if "batch" not in a.skip:
        fn = batch_fn(a)
        rows = []
        for n in a.batch:
            rows.append(bench_batch(n, a, fn))
            print(
                f"  (b) N={n}: flexjax {rows[-1]['flexjax_samples_per_s']:.0f}/s, "
                f"exudyn {rows[-1]['exudyn_samples_per_s']:.0f}/s",
                file=sys.stderr,
                flush=True,
            )
        print(
            f"\n(b) stiff steel ANCF pendulum, {STIFF_ELEMENTS} elements, E = 210 GPa +-10 %, "
            f"{a.batch_steps} steps of {a.batch_dt:g} s; flexjax run_batch vs Exudyn loop"
        )
        print(
            _table(
                rows,
                [
                    ("N", lambda r: str(r["n"])),
                    ("fj compile (s)", lambda r: f"{r['flexjax_compile_s']:.2f}"),
                    ("fj run (s)", lambda r: f"{r['flexjax_run_s']:.3f}"),
                    ("fj samples/s", lambda r: f"{r['flexjax_samples_per_s']:.0f}"),
                    ("exu run (s)", lambda r: f"{r['exudyn_run_s']:.3f}"),
                    ("exu samples/s", lambda r: f"{r['exudyn_samples_per_s']:.0f}"),
                    ("fj/exu throughput", lambda r: f"{r['throughput_ratio']:.2f}x"),
                    ("max |tip fj - exu| m", lambda r: f"{r['tip_diff_max']:.1e}"),
                    ("all ok", lambda r: "yes" if r["all_ok"] and r["agree"] else "NO"),
                ],
            )
        )
        for r in rows:
            flat.update({f"batch_{k}_{r['n']}": v for k, v in r.items() if k != "n"})
            flat[f"batch_throughput_ratio_{r['n']}"] = r["throughput_ratio"]

    if "spinup" not in a.skip:
        r = bench_spinup(a)
        print(
            f"\n(c) spin-up of a hub-clamped cantilever (L = 10 m, omega_s = {r['omega_s']:g} rad/s after "
            f"{SPIN_TS:g} s), {r['elements']} elements, {r['t_end']:g} s, h = {r['dt']:g} s ({r['steps']} steps)"
        )
        print(
            _table(
                [r],
                [
                    ("fj compile (s)", lambda r: f"{r['flexjax_compile_s']:.2f}"),
                    ("fj run (s)", lambda r: f"{r['flexjax_run_s']:.3f}"),
                    ("exu setup (s)", lambda r: f"{r['exudyn_setup_s']:.4f}"),
                    ("exu run (s)", lambda r: f"{r['exudyn_run_s']:.3f}"),
                    ("fj/exu time", lambda r: f"{r['time_ratio']:.1f}x"),
                    ("fj tip deflection (m)", lambda r: f"{r['flexjax_tip_deflection']:.6e}"),
                    ("exu tip deflection (m)", lambda r: f"{r['exudyn_tip_deflection']:.6e}"),
                    ("|tip fj - exu| m", lambda r: f"{r['tip_diff']:.1e}"),
                    ("agree", lambda r: "yes" if r["agree"] and r["flexjax_ok"] else "NO"),
                ],
            )
        )
        flat.update({f"spinup_{k}": v for k, v in r.items()})

    if "grad" not in a.skip:
        g = bench_gradient(a)
        print(
            f"\ngradient d(tip x)/dE, stiff pendulum, {a.grad_steps} steps of {a.grad_dt:g} s (flexjax only):\n"
            f"  forward: compile {g['forward_compile_s']:.2f} s, run {g['forward_run_s']:.3f} s\n"
            f"  grad:    compile {g['grad_compile_s']:.2f} s, run {g['grad_run_s']:.3f} s\n"
            f"  gradient time / forward time = {g['grad_over_forward']:.2f}; value {g['grad_value']:.6e} "
            f"(central difference {g['grad_fd']:.6e}, rel. diff {g['grad_fd_rel_error']:.1e})"
        )
        flat.update({f"gradient_{k}": v for k, v in g.items() if k != "grad_over_forward"})
        flat["grad_over_forward"] = g["grad_over_forward"]

    load_end = os.getloadavg()
    flat["load_avg_1min_end"], flat["load_avg_5min_end"] = load_end[0], load_end[1]
    print(
        f"\nload average (1 min) {load_start[0]:.1f} at start, {load_end[0]:.1f} at end "
        f"on {os.cpu_count()} cores: wall times are noisy when it exceeds the core count"
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(flat, f, indent=2)
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
