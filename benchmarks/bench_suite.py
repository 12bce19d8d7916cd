r"""Model suite: flexjax against Exudyn on seven planar flexible multibody models, side by side.

Run standalone (see benchmarks/README.md); Exudyn is needed (`pip install ".[bench]"`):

    python benchmarks/bench_suite.py --json suite.json             # all models and the batch part, ~8 min
    python benchmarks/bench_suite.py --quick --batch 0             # 5 models, shorter runs, no batch part, ~2 min
    python benchmarks/bench_suite.py --models slider_crank,chain --repeat 5 --batch 16

Every flexible part is the same element in both codes: the planar gradient-deficient ANCF
cable, flexjax `AncfBeam2D(strain="stretch", axial_order=5, bending_order=3)` and Exudyn
`ObjectANCFCable2D` with its default Gauss rules (`useReducedOrderIntegration=0`), see
bench_peers.py. Both integrate with index-3 generalized-alpha, the same `--rho-inf`, the
same fixed step and end time per model. flexjax runs its default solver,
`fj.simulate(system, q0, v0, t1, h, solver=fj.GeneralizedAlpha(rho_inf=...))`, saving only
the final state (`save_every` = the step count) and reporting failure instead of raising
(`throw=False`), for every model alike. Exudyn runs `SolveDynamic` with its defaults
except spectral radius, step and end time (bench_peers.exudyn_settings) and Newton's
absolute residual tolerance, set by one rule for every model (`ROUNDOFF_TOLERANCE` below:
the default cannot be reached in the two arms).

Models (JSON suffix, compared quantity at the end time):

- `pendulum16`, `pendulum64`, `pendulum256`: the very flexible pinned pendulum of
  bench_peers.py (L = 1.2 m, E = 0.7 MPa) with 16, 64, 256 elements, h = 0.5 ms, 1 s
  (256 elements: 0.1 s, which keeps the whole suite near 6 min); every node's position
  (within 0.1 s the pin's influence has not reached the tip, which falls freely).
- `slider_crank`: `flexjax.models.flexible_slider_crank` (crank 0.15 m at 150 rad/s, steel
  rod 0.5 m in 4 elements, 0.5 kg slider on y = 0, gravity), h = 0.1 ms, 0.2 s; slider x.
  The crank turns at a prescribed constant speed, so its tip follows
  $r_A(t) = c(\cos\omega t, \sin\omega t)$ whatever the crank's inertia; both codes
  prescribe that motion on the rod's first node instead of modelling the crank body
  (flexjax a `DrivingConstraint`, Exudyn two `CoordinateConstraint`s), from the builder's
  consistent start `flexible_slider_crank_state`.
- `two_link_arm`: the seed-002 arm of `flexjax.models.clearance_arm` with the ideal elbow
  (links of 2 and 4 elements, pinned at O, elbow pin, no gravity) under its two PID joint
  torques tracking the circle, h = 0.2 ms, 2 s; tip position. The PID integral is sampled
  at the step as in flexjax (`PIDJointTorque`: $I_{n+1} = I_n + h e(q_n, t_n)$, kept while
  step n+1 is solved). Exudyn: a `TorsionalSpringDamper` per joint with stiffness Kp and
  damping Kd, whose offset, velocity offset and torque are set to $\theta_{ref}(t_{n+1})$,
  $\dot\theta_{ref}(t_{n+1})$ and $-K_i I_{n+1}$ by a pre-step function (residuals are
  evaluated at $t_{n+1}$ only, so this is the continuous law at the step ends; the
  connector also puts Kp and Kd into Exudyn's Newton matrix, where a Python load would
  not). The references are flexjax's own `JointReference`s, tabulated at the step times.
- `flfj_arm`: flexible link, flexible joint, the arm of benchmarks/modal_kinetic_vs_ancf.py:
  a rigid rotor (0.002 kg m^2) pinned at the origin, a torsion spring (k = 1 N m/rad)
  between the rotor angle and the slope angle of the first node of a steel rod (d = 2 mm,
  1 m, 8 elements) pinned at the rotor axis, no gravity; the rotor torque is the PD law of
  flexjax/models/flfj_arm.py, $K_p(\theta_{ref} - \theta) - K_d\dot\theta$, on a 1 rad
  rest-to-rest move in 1 s (`RestToRest`); h = 0.5 ms, 2 s; tip position. flexjax:
  `RigidBody2D`, `RevoluteJoint`, `AncfPin`, `CoordinateControl(PD)` and that file's
  `JointSpring`; Exudyn: `ObjectRigidBody2D`, coordinate constraints, a
  `TorsionalSpringDamper` to a rigid marker on the cable's first element, and one to the
  ground with stiffness Kp, damping Kd and the reference as offset (set per step).
- `chain`: three soft links (0.4 m, 1 cm square, 1200 kg/m^3, E = 50 MPa), 4 elements each,
  the first pinned to the ground, each pinned to the next at their ends, released
  horizontal under gravity; h = 0.5 ms, 1 s; tip position of the last link.
- 3D: not compared. flexjax's `AncfBeam3D` is the fully parameterized 3243 element
  (position and three gradients per node, continuum strain energy); Exudyn's
  `ObjectANCFCable` is a gradient-deficient cable without torsion and its `ObjectANCFBeam`
  carries only the two cross-section gradients per node. Neither is the same element.

Agreement tolerance. The two codes solve the same discrete equations, so their results
differ only by where their Newton iterations stop (flexjax: increment below 1e-10
relative; Exudyn: residual below 1e-8 relative or the absolute tolerance), propagated over
the run; their distance is the largest over the compared points (m). The scale is the
time-discretization error of the compared points, estimated from Exudyn at h and h/2
(second order: $e_h \approx \tfrac43 |x_h - x_{h/2}|$, not timed): the codes must agree
to 1 % of it, a hundred times closer than either is to the solution of the model.
What the check can see: a 3-point axial Gauss rule in place of 5 moves the pendulum16,
FLFJ and chain results by 12, 34 and 0.17 e_h, Green-Lagrange strain the pendulum16,
pendulum256 and chain results by 370, 50 and 0.8 e_h, rho_inf = 0.85 in place of 0.9
every result but the arm's by 1.5-16 % of e_h; the arm, stiff and slowly moving, feels
none of these (< 0.1 % of e_h).

Batch part (`--batch N`, default 64; 0 skips it), for every model run with at most 100
coordinates (pendulum64 and pendulum256 are left out: 64 samples would take minutes in
each code): N values of one physical parameter, a Latin hypercube in +-10 % of its nominal
value (`--seed`), the Young's modulus of the flexible parts (pendulum16, both arm links,
the FLFJ rod, the chain links) or the slider mass (slider_crank), each a full run of the
model to a shorter end time than the single run's, the same in both codes (`BATCH_T1`:
pendulum16, FLFJ arm and chain 0.5 s, slider-crank 0.05 s, arm 0.4 s). flexjax:
`flexjax.batch.run_batch(fn, values, chunk_size=N)` of the single run's function with the
parameter as input and the default solver (`GeneralizedAlpha(rho_inf=...)`), one chunk on
one JAX device, as the single runs (bench_peers.py (b) shards over the cores instead); its
compile time is `BatchInfo.compile_s`, its run the median of `--repeat` warm calls. The
same `fn` also runs as a plain AOT-compiled `jax.jit(jax.vmap(fn))` (outputs copied to
NumPy, as run_batch returns them), which run_batch should never be slower than. Exudyn:
one built system, the parameter set per sample (`SetObjectParameter` + `Assemble`, as
bench_peers.py (b)) and `SolveDynamic` in a Python loop, median of `--repeat` passes. The
three are timed in turn (run_batch and the vmap alternate which comes first), so that they
see the same machine load. Every sample must succeed and agree with its Exudyn run within
1 % of the time-step error, the smallest of the estimates at the smallest, middle and
largest parameter value (Exudyn at h and h/2, not timed). Reported per model: samples/s of
run_batch, of the vmap and of the Exudyn loop; `batch_throughput_ratio_<model>` =
run_batch samples/s / Exudyn samples/s (goal: at least 10 on each model),
`vmap_over_run_batch_<model>` = vmap run time / run_batch run time (at least 1: run_batch
is not slower), `geomean_batch_throughput_ratio`, `worst_batch_throughput_ratio`; the
other numbers as `batch_<key>_<model>`.

The batch part also measures what the 10x goal asks of each sample's step (microseconds
per sample and step): `batch_goal_budget_us_per_step_<model>`, the Exudyn loop's time
divided by 10; `batch_run_batch_us_per_step_<model>`, run_batch's; and
`batch_floor_us_per_step_<model>`, the two parts that every iteration and every new
matrix repeat: the mean Newton iterations per step of the nominal run
(`batch_newton_mean_<model>`) times one evaluation of the generalized-alpha residual
(`batch_residual_us_<model>`), plus its new matrices per step
(`batch_matrices_per_step_<model>`) times one Newton matrix with its inverse
(`batch_matrix_us_<model>`), each vmapped over the batch and timed inside a compiled
loop (`batch_work`), divided by the number of devices. run_batch cannot go below that
floor without fewer iterations or matrices or a cheaper residual. `--host-devices K`
splits the CPU into K JAX devices, over which run_batch shards each chunk (the vmap
and the floor's loops run on one).

Timing as in bench_peers.py: flexjax `jax.jit(f).lower().compile()` is the compile time
and the run time the median of `--repeat` warm calls; Exudyn build + `Assemble` is the
setup, the run the median of `--repeat` `SolveDynamic` calls. `time_ratio` = flexjax run /
Exudyn run (below 1: flexjax is faster). Newton iterations: flexjax's largest per step
(timed run) and mean per step (one more, untimed run that saves every step), Exudyn's mean
per step and its Jacobian count. `--blas-threads 1` (default) reruns the script with
single-threaded BLAS, as bench_peers does. `--json FILE` writes one flat object:
`time_ratio_<model>`, `geomean_time_ratio`, `worst_time_ratio`, `n_models`,
`compile_s_<model>`, `run_s_<model>`, `exudyn_run_s_<model>`, `agreement_<model>` (m),
`tol_<model>` (m), the other per-model numbers and the load average at start and end.
"""

import argparse
import inspect
import json
import math
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from bench_batch import _table  # same printed-table layout as the other benchmarks
from bench_peers import (
    AXIAL_ORDER,
    BENDING_ORDER,
    FLEX,
    ExudynPendulum,
    G,
    _aot,
    _exudyn,
    _median_run,
    _rerun_with_environment,
    exudyn_settings,
)
from modal_kinetic_vs_ancf import (  # the FLFJ arm's rod, rotor and joint spring
    RHO,
    ROTOR,
    D,
    E,
    JointSpring,
    L as FLFJ_LENGTH,
)

import flexjax as fj
from flexjax.batch import run_batch
from flexjax.control.pd import PD, CoordinateControl
from flexjax.joints.ancf import AncfPin, AncfRevolute
from flexjax.models.clearance_arm import clearance_arm, clearance_arm_state
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state
from flexjax.models.flfj_arm import KD, KP
from flexjax.solvers._dense import inverse

CHAIN = dict(length=0.4, area=1e-4, second_moment=1e-8 / 12, rho=1200.0, youngs=5e7)
CHAIN_LINKS, CHAIN_ELEMENTS = 3, 4
FLFJ_ELEMENTS, FLFJ_SPRING = 8, 1.0  # elements, joint spring k (N m/rad)
FLFJ_MOVE, FLFJ_MOVE_TIME = 1.0, 1.0  # rad, s
TOL_FRACTION = 0.01  # agreement tolerance: this fraction of the estimated time-step error
# Exudyn's Newton stops when its force residual is below 1e-8 of the step's first one or below
# an absolute tolerance, 1e-10 N by default. Round-off in the elastic forces puts a floor of a
# few 1e-15 EA (axial stiffness) under that residual: the two-link arm (EA = 7.5e7 N) fails in
# its first steps at 1e-7 N, the FLFJ arm (EA = 6.5e5 N) at 2e-9 N, both started at rest under
# near-zero loads. No one value serves all models: at 1e-6 N, which the arm needs, the FLFJ
# arm (rotor torques below 1 N m, a 24 g rod) ends 9e-8 m from its converged result, 30 % of
# its time-step error. The rule, the same for every model: ROUNDOFF_TOLERANCE times the
# largest EA (N), never below Exudyn's default.
ROUNDOFF_TOLERANCE = 2e-14
EXUDYN_DEFAULT_ABSOLUTE_TOLERANCE = 1e-10
# The batch part (--batch N): end times, shorter than the single runs' (same in both codes),
# and the largest model it runs (coordinates); the +-10 % spread of the parameter and the goal.
BATCH_T1 = dict(pendulum=0.5, slider_crank=0.05, two_link_arm=0.4, flfj_arm=0.5, chain=0.5)
BATCH_MAX_NQ = 100
BATCH_SPREAD = 0.1
BATCH_GOAL = 10.0  # flexjax run_batch / Exudyn loop throughput, per model


# -- one element in both codes ------------------------------------------------------------------
def peer_beam(length, rho, area, second_moment, youngs, n_elements):
    """flexjax's planar ANCF beam with the measures and Gauss rules of Exudyn's cable."""
    return fj.AncfBeam2D(
        length,
        rho,
        area,
        second_moment,
        youngs,
        n_elements,
        strain="stretch",
        axial_order=AXIAL_ORDER,
        bending_order=BENDING_ORDER,
    )


def as_peer_beam(beam):
    """`beam` (a builder's `AncfBeam2D`) with the peer element's measures and Gauss rules."""
    return peer_beam(beam.length, beam.rho, beam.area, beam.second_moment, beam.youngs, beam.n_elements)


def exudyn_cable(mbs, beam, start=(0.0, 0.0), angle=0.0, gravity=(0.0, 0.0), pinned=False):
    """The flexjax `beam` as Exudyn cable elements, straight and unstrained from `start`
    along `angle`; `pinned`: node 0 held at `start` by coordinate constraints (as
    bench_peers). Returns the dict of `GenerateBeamElementsAlongLine` (nodes, elements)."""
    import exudyn.beams as beams
    import exudyn.itemInterface as eii

    E_, A, L = float(beam.youngs), float(beam.area), float(beam.length)
    cable = eii.ObjectANCFCable2D(
        massPerLength=float(beam.rho) * A,
        bendingStiffness=E_ * float(beam.second_moment),
        axialStiffness=E_ * A,
        useReducedOrderIntegration=0,
    )
    end = (start[0] + L * math.cos(angle), start[1] + L * math.sin(angle))
    return beams.GenerateBeamElementsAlongLine(
        mbs,
        [*start, 0.0],
        [*end, 0.0],
        beam.n_elements,
        cable,
        gravity=[*gravity, 0.0],
        groundConstraintsStart=[1, 1, 0, 0] if pinned else None,
    )


def exudyn_pin(mbs, node_i, node_j):
    """Planar pin between two Exudyn nodes: $r_i - r_j = 0$ (flexjax `AncfPin`/`AncfRevolute`)."""
    import exudyn.itemInterface as eii

    mi = mbs.AddMarker(eii.MarkerNodePosition(nodeNumber=node_i))
    mj = mbs.AddMarker(eii.MarkerNodePosition(nodeNumber=node_j))
    return mbs.AddObject(eii.RevoluteJoint2D(markerNumbers=[mi, mj]))


def exudyn_coordinate_constraints(mbs, node, coordinates):
    """One `CoordinateConstraint` to ground per coordinate of `node` (displacement = offset,
    0 until changed)."""
    import exudyn.itemInterface as eii

    ground = mbs.AddNode(eii.NodePointGround(referenceCoordinates=[0, 0, 0]))
    m_ground = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    return [
        mbs.AddObject(
            eii.CoordinateConstraint(
                markerNumbers=[m_ground, mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=node, coordinate=c))]
            )
        )
        for c in coordinates
    ]


def exudyn_set_youngs(mbs, info, beam, youngs):
    """Young's modulus `youngs` on every cable element of `info` (from `exudyn_cable(mbs,
    beam)`): axial stiffness E A, bending stiffness E I."""
    for o in info["elements"]:
        mbs.SetObjectParameter(o, "axialStiffness", youngs * float(beam.area))
        mbs.SetObjectParameter(o, "bendingStiffness", youngs * float(beam.second_moment))


def suite_settings(t1, h, rho_inf, beams):
    """bench_peers' Exudyn settings, Newton's absolute residual tolerance above the round-off
    of the stiffest axial force scale EA among `beams` (see ROUNDOFF_TOLERANCE)."""
    ss = exudyn_settings(t1, h, rho_inf)
    roundoff = ROUNDOFF_TOLERANCE * max(float(b.youngs * b.area) for b in beams)
    ss.timeIntegration.newton.absoluteTolerance = max(EXUDYN_DEFAULT_ABSOLUTE_TOLERANCE, roundoff)
    return ss


class ExudynPendulumNodes:
    """bench_peers' `ExudynPendulum` with the suite's settings, `solve()` returning every
    node's position (n + 1, 2)."""

    def __init__(self, n, t1, h, rho_inf):
        self.pendulum = ExudynPendulum(FLEX, n, t1, h, rho_inf)
        self.mbs, self.setup_s = self.pendulum.mbs, self.pendulum.setup_s
        self.settings = self.pendulum.settings = suite_settings(t1, h, rho_inf, [flex_beam(n)])

    def solve(self, youngs=None):
        """Every node's position at the end time; `youngs`: E of the beam for this run
        (set on every element, then `Assemble`), else the one it has."""
        self.pendulum.solve(youngs)
        return np.stack([node_position(self.mbs, k) for k in self.pendulum.info["nodes"]])


def tabulate(fn, t1, h):
    """`fn(t)` (a flexjax reference or load, in jnp) and its time derivative at the step
    times $t_k = k h$, k = 0..steps, as NumPy arrays: an Exudyn pre-step function looks
    them up instead of calling JAX."""
    ts = jnp.arange(round(t1 / h) + 1) * h
    value, rate = jax.vmap(lambda t: jax.jvp(fn, (t,), (jnp.ones_like(t),)))(ts)
    return np.asarray(value), np.asarray(rate)


class ExudynModel:
    """An Exudyn system built once by `build(mbs) -> (readout, pre_step, reset, vary)` and
    solved from its initial state by `solve()`. `pre_step(mbs, k)` runs before step k -> k+1
    (Exudyn calls it with the step's end time); `reset()` restores what it changes to
    t = 0 before each run, since the initial accelerations are computed from it;
    `vary(mbs, value)` sets the batch part's parameter (`Model.parameter`). `beams`: the
    model's flexjax beams, for the Newton tolerance (`suite_settings`)."""

    def __init__(self, build, beams, t1, h, rho_inf):
        exu = _exudyn()
        t = time.perf_counter()
        self.sc = exu.SystemContainer()
        self.mbs = self.sc.AddSystem()
        self.readout, pre_step, self.reset, self.vary = build(self.mbs)
        if pre_step is not None:
            self.mbs.SetPreStepUserFunction(lambda mbs, t_end: pre_step(mbs, round(t_end / h) - 1) or True)
        self.mbs.Assemble()
        self.setup_s = time.perf_counter() - t
        self.settings = suite_settings(t1, h, rho_inf, beams)

    def solve(self, value=None):
        """The compared points at the end time; `value`: the batch parameter for this run
        (set by `vary`, then `Assemble`, as bench_peers.py (b) does), else the one it has."""
        if value is not None:
            self.vary(self.mbs, value)
            self.mbs.Assemble()
        self.reset()
        if not self.mbs.SolveDynamic(self.settings):
            raise RuntimeError("Exudyn SolveDynamic failed")
        return np.atleast_2d(self.readout(self.mbs))


def node_position(mbs, node):
    """Position (x, y) of an Exudyn node in its current configuration (m)."""
    return np.asarray(mbs.GetNodeOutput(node, _exudyn().OutputVariableType.Position))[:2]


# -- the models -----------------------------------------------------------------------------------
class Model(NamedTuple):
    """`flexjax(value=None) -> (system, q0, v0, readout(q))`; `exudyn(t1, h, rho_inf)` -> an
    object with `setup_s`, `mbs` and `solve(value=None)` (`ExudynModel`,
    `ExudynPendulumNodes`). Both readouts give the compared points, one per row (a
    position, or the slider's x). `value`: the batch part's parameter (`parameter`, nominal
    value `nominal`; None: the nominal one), a traced scalar in flexjax."""

    label: str
    quantity: str
    h: float
    t1: float
    t1_quick: float | None  # None: left out of --quick
    flexjax: Callable
    exudyn: Callable
    parameter: str  # the batch part's parameter, varied by +-10 %
    nominal: float
    t1_batch: float  # the batch part's end time (both codes)


def flex_beam(n, youngs=None):
    """The very flexible pendulum's beam with `n` peer elements (E: `youngs`, default FLEX's)."""
    youngs = FLEX["youngs"] if youngs is None else youngs
    return peer_beam(FLEX["length"], FLEX["rho"], FLEX["area"], FLEX["second_moment"], youngs, n)


def pendulum(n, t1, t1_quick):
    """The very flexible pendulum of bench_peers.py with `n` elements (its Exudyn class).
    Every node is compared: within 0.1 s (the 256-element run) the pin's influence has
    not reached the tip yet, which falls freely."""

    def flexjax(youngs=None):
        beam = flex_beam(n, youngs)
        system = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -G))])
        q0 = beam.straight_coordinates()
        return system, q0, jnp.zeros_like(q0), beam.node_positions

    return Model(
        f"flexible pendulum, {n} elements",
        "all node positions",
        5e-4,
        t1,
        t1_quick,
        flexjax,
        lambda t1, h, rho_inf: ExudynPendulumNodes(n, t1, h, rho_inf),
        "E of the beam (Pa)",
        FLEX["youngs"],
        BATCH_T1["pendulum"],
    )


def _slider_crank_parts():
    """Rod (peer element), slider, crank length, speed, gravity and the rod's and slider's
    initial state, all from `flexible_slider_crank` and its consistent start. Concrete even
    when called inside a traced function (the batch part's), since none depends on its input."""
    with jax.ensure_compile_time_eval():
        base = flexible_slider_crank()
        q, v = flexible_slider_crank_state(base)
        rod, part = as_peer_beam(base.bodies[1]), lambda x, i: x[base.body_slice(i)]
        crank, omega = float(base.bodies[0].length), float(base.joints[1].g.rate)
        g = tuple(float(x) for x in base.force_elements[0].g)
        state = tuple(jnp.concatenate([part(x, 1), part(x, 2)]) for x in (q, v))
    return rod, base.bodies[2], crank, omega, g, state


def crank_tip(crank, omega):
    """The crank tip's prescribed circle $c(\\cos\\omega t, \\sin\\omega t)$ (jnp, for both codes)."""
    return lambda t: crank * jnp.stack([jnp.cos(omega * t), jnp.sin(omega * t)])


def slider_crank_flexjax(slider_mass=None):
    """Rod and slider; the rod's first node on the crank tip's circle, the slider on y = 0.
    `slider_mass` (kg): in place of the builder's."""
    rod, slider, crank, omega, g, (q0, v0) = _slider_crank_parts()
    slider = slider if slider_mass is None else fj.PointMass(slider_mass)  # the start state is kinematic
    joints = [
        fj.DrivingConstraint(0, lambda q: q[0:2], crank_tip(crank, omega), 2),  # rod node 0 on the crank tip
        AncfPin(0, -1, 1, (0.0, 0.0)),
        fj.coordinate_driver(1, 1, fj.ConstantRate(0.0, 0.0)),
    ]  # slider on y = 0
    system = fj.System([rod, slider], joints, [fj.Gravity(g)])
    return system, q0, v0, lambda q: q[system.body_slice(1)][:1]


def slider_crank_exudyn(t1, h, rho_inf):
    """The same rod and slider; the rod's first node driven by two coordinate constraints
    whose offsets the pre-step function sets to the circle at the step's end time."""
    import exudyn.itemInterface as eii

    rod, slider, crank, omega, g, (q0, v0) = _slider_crank_parts()
    tip, _ = tabulate(crank_tip(crank, omega), t1, h)
    displacement = tip - np.array([crank, 0.0])  # Exudyn constrains displacements from the reference
    v_nodes = np.asarray(v0[:-2]).reshape(-1, 4)

    def build(mbs):
        info = exudyn_cable(mbs, rod, (crank, 0.0), gravity=g)
        for node, vel in zip(info["nodes"], v_nodes, strict=False):
            mbs.SetNodeParameter(node, "initialVelocities", vel.tolist())
        s_node = mbs.AddNode(eii.NodePoint2D(referenceCoordinates=np.asarray(q0[-2:]).tolist()))
        s_body = mbs.AddObject(eii.MassPoint2D(mass=float(slider.mass), nodeNumber=s_node))
        mbs.AddLoad(
            eii.Gravity(markerNumber=mbs.AddMarker(eii.MarkerBodyMass(bodyNumber=s_body)), loadVector=[*g, 0.0])
        )
        exudyn_pin(mbs, info["nodes"][-1], s_node)
        exudyn_coordinate_constraints(mbs, s_node, [1])
        drive = exudyn_coordinate_constraints(mbs, info["nodes"][0], [0, 1])

        def pre_step(mbs, k):
            for c, d in zip(drive, displacement[k + 1], strict=False):
                mbs.SetObjectParameter(c, "offset", float(d))

        vary = lambda mbs, mass: mbs.SetObjectParameter(s_body, "mass", mass)
        return lambda mbs: node_position(mbs, s_node)[:1], pre_step, lambda: pre_step(mbs, -1), vary

    return ExudynModel(build, [rod], t1, h, rho_inf)


def _arm(youngs=None):
    """The ideal-elbow arm with peer links, built from `clearance_arm`'s joints and PIDs
    (E of both links: `youngs`, default the builder's)."""
    base = clearance_arm() if youngs is None else clearance_arm(youngs)
    system = fj.System([as_peer_beam(b) for b in base.bodies], base.joints, base.force_elements)
    return system, *clearance_arm_state(system)


def arm_flexjax(youngs=None):
    """The arm as built; the compared point is the tip P."""
    system, q0, v0 = _arm(youngs)
    return system, q0, v0, lambda q: system.bodies[1].node_position(q[system.body_slice(1)], -1)


def arm_exudyn(t1, h, rho_inf):
    """The same arm; each PID as a torsional spring-damper (see the module docstring)."""
    import exudyn.itemInterface as eii

    system, q0, _ = _arm()
    links, pids = system.bodies, system.force_elements
    refs = [tabulate(pid.reference, t1, h) for pid in pids]
    gains = [(float(p.kp), float(p.ki), float(p.kd)) for p in pids]
    q1, q2 = (np.asarray(q0[system.body_slice(i)]).reshape(-1, 4) for i in (0, 1))
    angle = lambda node: math.atan2(node[3], node[2])

    def build(mbs):
        exu = _exudyn()
        info1 = exudyn_cable(mbs, links[0], tuple(q1[0, :2]), angle(q1[0]), pinned=True)
        info2 = exudyn_cable(mbs, links[1], tuple(q2[0, :2]), angle(q2[0]))
        exudyn_pin(mbs, info1["nodes"][-1], info2["nodes"][0])
        rigid = lambda body, x: mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=body, localPosition=[x, 0, 0]))
        le1 = float(links[0].length) / links[0].n_elements
        pairs = [
            (rigid(mbs.AddObject(eii.ObjectGround()), 0.0), rigid(info1["elements"][0], 0.0)),  # joint 1 at O
            (rigid(info1["elements"][-1], le1), rigid(info2["elements"][0], 0.0)),
        ]  # joint 2 at the elbow
        # torque on the driven side: -(Kp (theta - offset) + Kd (omega - velocityOffset) + torque)
        joints = [
            mbs.AddObject(eii.TorsionalSpringDamper(markerNumbers=list(m), stiffness=kp, damping=kd))
            for m, (kp, _, kd) in zip(pairs, gains, strict=False)
        ]
        integral = [0.0, 0.0]

        def set_inputs(mbs, k):
            for j, c in enumerate(joints):
                mbs.SetObjectParameter(c, "offset", float(refs[j][0][k]))
                mbs.SetObjectParameter(c, "velocityOffset", float(refs[j][1][k]))
                mbs.SetObjectParameter(c, "torque", -gains[j][1] * integral[j])

        def pre_step(mbs, k):
            for j, c in enumerate(joints):  # I_{k+1} = I_k + h e(q_k, t_k), as PIDJointTorque.advance_state
                theta = float(mbs.GetObjectOutput(c, exu.OutputVariableType.Rotation))
                integral[j] += h * (refs[j][0][k] - theta)
            set_inputs(mbs, k + 1)

        def reset():
            integral[:] = [0.0, 0.0]
            set_inputs(mbs, 0)

        def vary(mbs, youngs):
            for info, link in ((info1, links[0]), (info2, links[1])):
                exudyn_set_youngs(mbs, info, link, youngs)

        return lambda mbs: node_position(mbs, info2["nodes"][-1]), pre_step, reset, vary

    return ExudynModel(build, links, t1, h, rho_inf)


def _flfj_rod(youngs=None):
    """The 2 mm steel rod, given as modal_kinetic_vs_ancf.ancf gives it (unit area: rho is rho A,
    the beam's "E" is EA); `youngs`: the steel's E in place of modal_kinetic_vs_ancf's."""
    scale = 1.0 if youngs is None else youngs / E
    EA, EI, rho_a = E * np.pi * D**2 / 4, E * np.pi * D**4 / 64, RHO * np.pi * D**2 / 4
    return peer_beam(FLFJ_LENGTH, rho_a, 1.0, EI / EA, EA * scale, FLFJ_ELEMENTS)  # as modal_kinetic_vs_ancf.ancf


def _flfj_pd():
    """flfj_control's PD law on the rotor angle, on a smooth 1 rad rest-to-rest reference."""
    return PD(KP, KD, fj.RestToRest(FLFJ_MOVE, FLFJ_MOVE_TIME))


def flfj_flexjax(youngs=None):
    """Rotor (body 0) pinned at its centre, rod (body 1) pinned there, PD motor, joint spring."""
    rod = _flfj_rod(youngs)
    system = fj.System(
        [fj.RigidBody2D(1.0, ROTOR), rod],
        [fj.RevoluteJoint(0, (0.0, 0.0), None, (0.0, 0.0)), AncfPin(1, 0, None, (0.0, 0.0))],
        [CoordinateControl(0, 2, _flfj_pd()), JointSpring(jnp.asarray(FLFJ_SPRING))],
    )
    q0 = jnp.concatenate([jnp.zeros(3), rod.straight_coordinates()])
    return system, q0, jnp.zeros_like(q0), lambda q: rod.node_position(q[system.body_slice(1)], -1)


def flfj_exudyn(t1, h, rho_inf):
    """The same arm; the PD motor a torsional spring-damper to the ground, its offset the
    reference at the step's end time."""
    import exudyn.itemInterface as eii

    rod, pd = _flfj_rod(), _flfj_pd()
    reference, _ = tabulate(pd.reference, t1, h)

    def build(mbs):
        rotor = mbs.AddNode(eii.NodeRigidBody2D(referenceCoordinates=[0, 0, 0]))
        mbs.AddObject(eii.ObjectRigidBody2D(nodeNumber=rotor, mass=1.0, inertia=ROTOR))
        exudyn_coordinate_constraints(mbs, rotor, [0, 1])  # centre on the axis (flexjax RevoluteJoint)
        info = exudyn_cable(mbs, rod, pinned=True)
        m_rotor = mbs.AddMarker(eii.MarkerNodeRigid(nodeNumber=rotor))
        m_root = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=info["elements"][0], localPosition=[0, 0, 0]))
        mbs.AddObject(eii.TorsionalSpringDamper(markerNumbers=[m_rotor, m_root], stiffness=FLFJ_SPRING))
        m_ground = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=mbs.AddObject(eii.ObjectGround())))
        # motor torque -(Kp (theta - offset) + Kd omega) = Kp (reference - theta) - Kd omega
        motor = mbs.AddObject(
            eii.TorsionalSpringDamper(markerNumbers=[m_ground, m_rotor], stiffness=float(pd.kp), damping=float(pd.kd))
        )

        def pre_step(mbs, k):
            mbs.SetObjectParameter(motor, "offset", float(reference[k + 1]))

        def vary(mbs, youngs):
            varied = _flfj_rod(youngs)
            exudyn_set_youngs(mbs, info, varied, float(varied.youngs))  # the beam's E is EA (unit area)

        return lambda mbs: node_position(mbs, info["nodes"][-1]), pre_step, lambda: pre_step(mbs, -1), vary

    return ExudynModel(build, [rod], t1, h, rho_inf)


def _chain_links(youngs=None):
    """The chain's links, all alike (E: `youngs`, default CHAIN's)."""
    youngs = CHAIN["youngs"] if youngs is None else youngs
    return [
        peer_beam(CHAIN["length"], CHAIN["rho"], CHAIN["area"], CHAIN["second_moment"], youngs, CHAIN_ELEMENTS)
        for _ in range(CHAIN_LINKS)
    ]


def chain_flexjax(youngs=None):
    """Links along +x from the origin, pinned end to end, the first to the ground."""
    links = _chain_links(youngs)
    joints = [AncfPin(0, 0)] + [AncfRevolute(i, -1, i + 1, 0) for i in range(CHAIN_LINKS - 1)]
    system = fj.System(links, joints, [fj.Gravity((0.0, -G))])
    L = CHAIN["length"]
    q0 = jnp.concatenate([b.straight_coordinates((i * L, 0.0)) for i, b in enumerate(links)])
    return system, q0, jnp.zeros_like(q0), lambda q: links[-1].node_position(q[system.body_slice(CHAIN_LINKS - 1)], -1)


def chain_exudyn(t1, h, rho_inf):
    """The same chain; separate end nodes joined by `RevoluteJoint2D`s, as `AncfRevolute`."""
    links = _chain_links()

    def build(mbs):
        infos = [
            exudyn_cable(mbs, b, (i * CHAIN["length"], 0.0), gravity=(0.0, -G), pinned=i == 0)
            for i, b in enumerate(links)
        ]
        for a, b in zip(infos[:-1], infos[1:], strict=False):
            exudyn_pin(mbs, a["nodes"][-1], b["nodes"][0])

        def vary(mbs, youngs):
            for info, link in zip(infos, links, strict=False):
                exudyn_set_youngs(mbs, info, link, youngs)

        return lambda mbs: node_position(mbs, infos[-1]["nodes"][-1]), None, lambda: None, vary

    return ExudynModel(build, links, t1, h, rho_inf)


_default = lambda fn, name: inspect.signature(fn).parameters[name].default  # a builder's default value
MODELS = {
    "pendulum16": pendulum(16, 1.0, 1.0),
    "pendulum64": pendulum(64, 1.0, None),
    "pendulum256": pendulum(256, 0.1, None),
    "slider_crank": Model(
        "flexible slider-crank, rod 4 elements, 150 rad/s",
        "slider x",
        1e-4,
        0.2,
        0.05,
        slider_crank_flexjax,
        slider_crank_exudyn,
        "slider mass (kg)",
        _default(flexible_slider_crank, "slider_mass"),
        BATCH_T1["slider_crank"],
    ),
    "two_link_arm": Model(
        "two-link ANCF arm, ideal elbow, PID",
        "tip (x, y)",
        2e-4,
        2.0,
        0.4,
        arm_flexjax,
        arm_exudyn,
        "E of both links (Pa)",
        _default(clearance_arm, "youngs"),
        BATCH_T1["two_link_arm"],
    ),
    "flfj_arm": Model(
        "FLFJ arm: rotor under PD, torsion spring, rod 8 elements",
        "tip (x, y)",
        5e-4,
        2.0,
        0.5,
        flfj_flexjax,
        flfj_exudyn,
        "E of the rod (Pa)",
        E,
        BATCH_T1["flfj_arm"],
    ),
    "chain": Model(
        f"chain of {CHAIN_LINKS} links x {CHAIN_ELEMENTS} elements",
        "tip (x, y)",
        5e-4,
        1.0,
        0.5,
        chain_flexjax,
        chain_exudyn,
        "E of the links (Pa)",
        CHAIN["youngs"],
        BATCH_T1["chain"],
    ),
}


# -- measurement --------------------------------------------------------------------------------------
def flexjax_run(model, t1, rho_inf, save_every=None):
    """`f() -> (quantity, largest Newton iterations per step, success)` with flexjax's default
    solver; `save_every=None` keeps only the final state. Also returns the system."""
    system, q0, v0, readout = model.flexjax()
    steps = round(t1 / model.h)

    def f():
        tr = fj.simulate(
            system,
            q0,
            v0,
            t1,
            model.h,
            solver=fj.GeneralizedAlpha(rho_inf=rho_inf),
            save_every=save_every or steps,
            throw=False,
        )
        return jnp.atleast_2d(readout(tr.q[-1])), tr.newton_iterations, jnp.all(tr.succeeded)

    return f, system


def distance(a, b):
    """Largest distance between corresponding points (rows) of `a` and `b` (m)."""
    return float(np.max(np.linalg.norm(a - b, axis=-1)))


def _exudyn_median(ex, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = ex.solve()
        times.append(time.perf_counter() - t)
    it = ex.mbs.sys["dynamicSolver"].it
    return statistics.median(times), np.asarray(out), it.newtonStepsCount, it.newtonJacobiCount


def bench_model(name, a):
    model = MODELS[name]
    t1 = model.t1_quick if a.quick else model.t1
    steps = round(t1 / model.h)
    f, system = flexjax_run(model, t1, a.rho_inf)
    compiled, compile_s = _aot(f)
    jax.block_until_ready(compiled())  # first execution allocates; not timed
    fj_run, (x_fj, iters, ok) = _median_run(compiled, a.repeat)
    f_all, _ = flexjax_run(model, t1, a.rho_inf, save_every=1)  # Newton iterations of every step; not timed
    iters_all = np.asarray(f_all()[1])[1:]

    ex = model.exudyn(t1, model.h, a.rho_inf)
    ex_run, x_ex, ex_newton, ex_jac = _exudyn_median(ex, a.repeat)
    x_half = model.exudyn(t1, model.h / 2, a.rho_inf).solve()  # time-step error estimate; not timed
    x_fj = np.asarray(x_fj)
    err_h = distance(x_ex, x_half) * 4 / 3
    diff = distance(x_fj, x_ex)
    tol = TOL_FRACTION * err_h
    return {
        "model": name,
        "label": model.label,
        "quantity": model.quantity,
        "nq": system.nq,
        "steps": steps,
        "h": model.h,
        "t_end": t1,
        "compile_s": compile_s,
        "run_s": fj_run,
        "exudyn_setup_s": ex.setup_s,
        "exudyn_run_s": ex_run,
        "time_ratio": fj_run / ex_run,
        "flexjax_value": x_fj[-1].tolist(),
        "exudyn_value": x_ex[-1].tolist(),  # the last point: tip or slider
        "agreement": diff,
        "time_step_error": err_h,
        "tol": tol,
        "agree": diff <= tol and bool(ok),
        "flexjax_ok": bool(ok),
        "newton_max": int(np.max(iters)),
        "newton_mean": float(np.mean(iters_all)),
        "exudyn_newton_mean": ex_newton / steps,
        "exudyn_jacobians": int(ex_jac),
        "exudyn_absolute_tolerance": ex.settings.timeIntegration.newton.absoluteTolerance,
    }


def batch_samples(nominal, n, seed):
    """`n` values of a parameter in nominal (1 +- BATCH_SPREAD), a Latin hypercube (one per
    stratum, strata in random order; as bench_peers.py (b))."""
    rng = np.random.default_rng(seed)
    u = (rng.permutation(n) + rng.random(n)) / n
    return nominal * (1.0 - BATCH_SPREAD + 2.0 * BATCH_SPREAD * u)


def batch_fn(model, t1, rho_inf):
    """`fn(value) -> {"x": compared points, "ok": success}`: the single run's function with
    the batch parameter set to `value` (the default solver, only the final state saved)."""
    steps = round(t1 / model.h)

    def fn(value):
        system, q0, v0, readout = model.flexjax(value)
        tr = fj.simulate(
            system, q0, v0, t1, model.h, solver=fj.GeneralizedAlpha(rho_inf=rho_inf), save_every=steps, throw=False
        )
        return {"x": jnp.atleast_2d(readout(tr.q[-1])), "ok": jnp.all(tr.succeeded)}

    return fn


def batch_work(model, values, t1, rho_inf, repeat):
    r"""What one sample's step costs in the two parts that every Newton solver of this
    kind repeats, each vmapped over the batch's parameter values as `run_batch`
    evaluates it and timed inside one compiled loop (each pass feeds the next, so none is
    skipped; the cost of a call is left out), median of `repeat` calls, seconds per sample:

    - `residual`: one evaluation of the generalized-alpha Newton residual
      $[M\ddot q + \Phi_q^T\lambda - Q;\ \Phi]$ (the sum `GeneralizedAlpha.step` iterates on);
    - `matrix`: one Newton matrix, its Jacobian (`jax.jacfwd`) and inverse, as a kept
      matrix is formed (`GeneralizedAlpha`, dense below `_structure.MIN_SIZE` unknowns:
      all suite models), one sample at a time (`lax.map`), as each sample of a batch that
      asks for a new matrix forms its own;

    and, from `GeneralizedAlpha.step` over the nominal run (untimed), the mean Newton
    `iterations` and new `matrices` per step."""
    system, q0, v0, _ = model.flexjax(float(values[0]))
    n, nq, m = len(values), system.nq, system.nconstraints
    rng = np.random.default_rng(0)
    x = jnp.asarray(np.concatenate([1e-3 * rng.standard_normal((n, nq)), rng.standard_normal((n, m))], axis=1))
    acc = jnp.asarray(rng.standard_normal((n, nq)))

    def residual(value, x, acc):  # at q0 + a small x[:nq], multipliers x[nq:]
        system, q0, v0, _ = model.flexjax(value)
        q = q0 + x[:nq]
        Phi, Phi_vjp = jax.vjp(lambda q: system.constraints(q, 0.0), q)
        return jnp.concatenate([system.mass_product(q, acc) + Phi_vjp(x[nq:])[0] - system.forces(q, v0, 0.0), Phi])

    def matrix(value, x, acc):
        return inverse(jax.jacfwd(lambda y: residual(value, y, acc))(x))

    def one_at_a_time(f):  # as the batch forms its matrices: each sample that asks, on its own
        return lambda *args: jax.lax.map(lambda a: f(*a), args)

    def looped(f, passes, each=jax.vmap):
        def run(values, x, acc):  # a rounding-size change of x from each pass
            body = lambda _, x: x + 1e-30 * each(f)(values, x, acc).reshape(n, -1)[:, : nq + m]
            return jax.lax.fori_loop(0, passes, body, x)

        compiled, _ = _aot(run, jnp.asarray(values), x, acc)
        jax.block_until_ready(compiled(jnp.asarray(values), x, acc))  # first execution allocates; not timed
        return _median_run(lambda: compiled(jnp.asarray(values), x, acc), repeat)[0] / (n * passes)

    solver = fj.GeneralizedAlpha(rho_inf=rho_inf)
    steps = round(t1 / model.h)

    @eqx.filter_jit
    def counts():
        def one(state, k):
            state, info = solver.step(system, k * model.h, model.h, state)
            return state, (info.iterations, info.jacobians)

        return jax.lax.scan(one, solver.init(system, 0.0, q0, v0), jnp.arange(steps))[1]

    iterations, matrices = (float(np.mean(c)) for c in counts())
    return {
        "residual": looped(residual, 200),
        "matrix": looped(matrix, 10, one_at_a_time),
        "iterations": iterations,
        "matrices": matrices,
    }


def bench_batch_model(name, a, nq):
    """The batch part of one model: the same samples through `run_batch`, through a plain
    `jax.jit(jax.vmap(fn))`, and through an Exudyn loop, timed in turn."""
    model = MODELS[name]
    t1, n = model.t1_batch, a.batch
    values = batch_samples(model.nominal, n, a.seed)
    fn = batch_fn(model, t1, a.rho_inf)
    out, info = run_batch(fn, values, chunk_size=n, return_info=True)  # compiles; first execution not timed
    vmapped, vmap_compile_s = _aot(jax.vmap(fn), values)
    to_host = lambda tree: jax.tree_util.tree_map(np.asarray, tree)  # run_batch returns NumPy arrays too
    to_host(vmapped(values))  # first execution allocates; not timed
    ex = model.exudyn(t1, model.h, a.rho_inf)
    fj_times, vmap_times, ex_times = [], [], []

    def time_run_batch():
        t = time.perf_counter()
        out = run_batch(fn, values, chunk_size=n)
        fj_times.append(time.perf_counter() - t)
        return out

    def time_vmap():
        t = time.perf_counter()
        out = to_host(vmapped(values))
        vmap_times.append(time.perf_counter() - t)
        return out

    for k in range(a.repeat):  # all three in turn: they see the same machine load
        if k % 2:  # which flexjax call follows the Exudyn loop alternates: neither always runs first
            out_vmap, out = time_vmap(), time_run_batch()
        else:
            out, out_vmap = time_run_batch(), time_vmap()
        t = time.perf_counter()
        x_ex = np.stack([ex.solve(float(v)) for v in values])
        ex_times.append(time.perf_counter() - t)
    fj_run, vmap_run, ex_run = (statistics.median(x) for x in (fj_times, vmap_times, ex_times))
    steps = round(t1 / model.h)
    work = batch_work(model, values, t1, a.rho_inf, a.repeat)
    floor = (work["iterations"] * work["residual"] + work["matrices"] * work["matrix"]) / info.ndevices
    diffs = np.array([distance(out["x"][i], x_ex[i]) for i in range(n)])
    # time-step error at the ends and the middle of the range (Exudyn at h/2; not timed); tol: the smallest
    ex_half = model.exudyn(t1, model.h / 2, a.rho_inf)
    ends = [int(np.argmin(values)), int(np.argsort(values)[n // 2]), int(np.argmax(values))]
    err_h = min(distance(x_ex[i], ex_half.solve(float(values[i]))) * 4 / 3 for i in ends)
    tol = TOL_FRACTION * err_h
    ok = np.asarray(out["ok"])
    worst = int(np.argmax(diffs))
    return {
        "model": name,
        "nq": nq,
        "n": n,
        "parameter": model.parameter,
        "nominal": model.nominal,
        "spread": BATCH_SPREAD,
        "t_end": t1,
        "steps": steps,
        "chunk": info.chunk_size,
        "devices": info.ndevices,
        "compile_s": info.compile_s,
        "run_s": fj_run,
        "samples_per_s": n / fj_run,
        "vmap_compile_s": vmap_compile_s,
        "vmap_run_s": vmap_run,
        "vmap_samples_per_s": n / vmap_run,
        "exudyn_setup_s": ex.setup_s,
        "exudyn_run_s": ex_run,
        "exudyn_samples_per_s": n / ex_run,
        "throughput_ratio": ex_run / fj_run,
        "vmap_over_run_batch": vmap_run / fj_run,
        "residual_us": work["residual"] * 1e6,
        "matrix_us": work["matrix"] * 1e6,
        "newton_mean": work["iterations"],
        "matrices_per_step": work["matrices"],
        "floor_us_per_step": floor * 1e6,
        "goal_budget_us_per_step": ex_run / (BATCH_GOAL * n * steps) * 1e6,
        "run_batch_us_per_step": fj_run / (n * steps) * 1e6,
        "vmap_vs_run_batch_max": float(np.max(np.abs(out_vmap["x"] - out["x"]))),
        "agreement_max": float(diffs[worst]),
        "agreement_worst_value": float(values[worst]),
        "time_step_error": err_h,
        "tol": tol,
        "n_failed": int(np.sum(~ok)),
        "n_disagree": int(np.sum(diffs > tol)),
        "all_ok": bool(np.all(ok)),
        "agree": bool(np.all(ok) and np.all(diffs <= tol)),
    }


def print_batch_table(rows):
    print(
        _table(
            rows,
            [
                ("model", lambda r: r["model"]),
                ("nq", lambda r: str(r["nq"])),
                ("parameter", lambda r: f"{r['parameter']} {r['nominal']:g} +-{r['spread']:.0%}"),
                ("steps", lambda r: str(r["steps"])),
                ("fj compile (s)", lambda r: f"{r['compile_s']:.2f}"),
                ("run_batch (1/s)", lambda r: f"{r['samples_per_s']:.0f}"),
                ("vmap (1/s)", lambda r: f"{r['vmap_samples_per_s']:.0f}"),
                ("exu loop (1/s)", lambda r: f"{r['exudyn_samples_per_s']:.0f}"),
                ("run_batch/exu", lambda r: f"{r['throughput_ratio']:.2f}x"),
                ("run_batch (us/step)", lambda r: f"{r['run_batch_us_per_step']:.2f}"),
                ("10x budget (us/step)", lambda r: f"{r['goal_budget_us_per_step']:.2f}"),
                ("residual (us)", lambda r: f"{r['residual_us']:.2f}"),
                ("it./step", lambda r: f"{r['newton_mean']:.2f}"),
                ("matrix (us)", lambda r: f"{r['matrix_us']:.1f}"),
                ("matrices/step", lambda r: f"{r['matrices_per_step']:.4f}"),
                ("floor (us/step)", lambda r: f"{r['floor_us_per_step']:.2f}"),
                ("vmap/run_batch time", lambda r: f"{r['vmap_over_run_batch']:.3f}"),
                ("max |fj - exu| (m)", lambda r: f"{r['agreement_max']:.1e}"),
                ("tol (m)", lambda r: f"{r['tol']:.1e}"),
                (
                    "all ok/agree",
                    lambda r: "yes" if r["agree"] else f"NO ({r['n_failed']} failed, {r['n_disagree']} apart)",
                ),
            ],
        )
    )


def run_batch_part(a, rows, flat):
    """The batch part for the models of `rows` (single runs) with at most BATCH_MAX_NQ
    coordinates; prints its table and adds its numbers to `flat`."""
    skipped = [r for r in rows if r["nq"] > BATCH_MAX_NQ]
    todo = [r for r in rows if r["nq"] <= BATCH_MAX_NQ]
    if skipped:
        names = ", ".join(f"{r['model']} ({r['nq']} coordinates)" for r in skipped)
        print(f"\nbatch: skipped {names}: more than {BATCH_MAX_NQ} coordinates")
    if not todo:
        return
    load = os.getloadavg()
    flat["load_avg_1min_batch_start"] = load[0]
    batch = []
    for r in todo:
        batch.append(b := bench_batch_model(r["model"], a, r["nq"]))
        print(
            f"  batch {b['model']}: run_batch {b['samples_per_s']:.0f}/s, vmap {b['vmap_samples_per_s']:.0f}/s, "
            f"exudyn {b['exudyn_samples_per_s']:.0f}/s, max |diff| {b['agreement_max']:.1e} (tol {b['tol']:.1e})",
            file=sys.stderr,
            flush=True,
        )
    print(
        f"\nbatch: {a.batch} samples per model, the parameter a Latin hypercube in +-{BATCH_SPREAD:.0%} (seed "
        f"{a.seed}), shorter end times than above (both codes); flexjax run_batch (one chunk, "
        f"{batch[0]['devices']} device) and jax.jit(jax.vmap(fn)) with the default solver, Exudyn SolveDynamic "
        f"in a Python loop; samples/s = N / median of {a.repeat} passes, timed in turn; load average "
        f"{load[0]:.1f} (1 min) at its start"
    )
    print_batch_table(batch)
    ratios = [b["throughput_ratio"] for b in batch]
    geomean = math.exp(statistics.fmean(math.log(x) for x in ratios))
    worst = min(batch, key=lambda b: b["throughput_ratio"])
    slower = ", ".join(f"{b['model']} ({b['vmap_over_run_batch']:.3f})" for b in batch if b["vmap_over_run_batch"] < 1)
    vmap_ratios = [b["vmap_over_run_batch"] for b in batch]
    print(
        f"\nflexjax run_batch / Exudyn loop throughput: geometric mean {geomean:.2f}x over {len(batch)} models, "
        f"worst {worst['throughput_ratio']:.2f}x ({worst['model']}); goal >= {BATCH_GOAL:g}x on each model, met on "
        f"{sum(x >= BATCH_GOAL for x in ratios)} of {len(batch)}; vmap / run_batch run time {min(vmap_ratios):.3f}"
        f"-{max(vmap_ratios):.3f}, below 1 (run_batch slower) on: {slower or 'none'}; all samples succeed and "
        f"agree: {all(b['agree'] for b in batch)}"
    )
    over = [b["model"] for b in batch if b["floor_us_per_step"] > b["goal_budget_us_per_step"]]
    print(
        "us/step: per sample and step; 10x budget: the Exudyn loop's time / 10; residual, matrix: one batched "
        "evaluation of the Newton residual, one Newton matrix with its inverse (us per sample); it./step, "
        "matrices/step: the nominal run's; floor: iterations x residual + matrices x matrix, over the devices, "
        f"a floor under run_batch; it exceeds the 10x budget on {len(over)} of {len(batch)} models "
        f"({', '.join(over) or 'none'})"
    )
    for b in batch:
        flat.update({f"batch_{k}_{b['model']}": v for k, v in b.items() if k not in ("model", "parameter")})
        flat[f"vmap_over_run_batch_{b['model']}"] = b["vmap_over_run_batch"]
    flat.update(
        geomean_batch_throughput_ratio=geomean,
        worst_batch_throughput_ratio=worst["throughput_ratio"],
        worst_batch_model=worst["model"],
        n_batch_models=len(batch),
        batch_goal_ratio=BATCH_GOAL,
        batch_all_agree=all(b["agree"] for b in batch),
        batch_n=a.batch,
    )


# -- report ----------------------------------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--models",
        nargs="+",
        default=None,
        help=f"models to run, comma- or space-separated (default all; --quick: those with a quick end "
        f"time): {', '.join(MODELS)}",
    )
    p.add_argument("--quick", action="store_true", help="shorter end times, without pendulum64 and pendulum256")
    p.add_argument("--repeat", type=int, default=3, help="warm runs per code; the median is reported")
    p.add_argument("--rho-inf", type=float, default=0.9, help="generalized-alpha spectral radius (both codes)")
    p.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="OpenBLAS/OpenMP threads (default 1, as Exudyn's default single thread); 0 leaves the "
        "environment as it is",
    )
    p.add_argument(
        "--batch",
        type=int,
        default=64,
        metavar="N",
        help=f"batch part: N samples per model of at most {BATCH_MAX_NQ} coordinates (0: skip it)",
    )
    p.add_argument("--seed", type=int, default=0, help="batch part: seed of the Latin hypercube")
    p.add_argument(
        "--host-devices",
        type=int,
        default=1,
        metavar="K",
        help="split the CPU into K JAX devices (XLA_FLAGS=--xla_force_host_platform_device_count=K); "
        "run_batch shards each chunk over them (default 1)",
    )
    p.add_argument("--json", metavar="FILE", help="write one flat JSON object")
    a = p.parse_args(argv)
    if a.models is None:
        a.models = [m for m, spec in MODELS.items() if not a.quick or spec.t1_quick is not None]
    else:
        a.models = [m.strip() for arg in a.models for m in arg.split(",") if m.strip()]
    unknown = [m for m in a.models if m not in MODELS]
    if unknown:
        p.error(f"unknown models {unknown}; choose from {list(MODELS)}")
    if a.quick and any(MODELS[m].t1_quick is None for m in a.models):
        p.error("--quick has no end time for " + ", ".join(m for m in a.models if MODELS[m].t1_quick is None))
    if a.repeat < 1 or a.batch < 0 or a.host_devices < 1 or not 0 <= a.rho_inf < 1:
        p.error("--repeat and --host-devices must be >= 1, --batch >= 0 and 0 <= --rho-inf < 1 (index-3 Exudyn)")
    return a


def print_table(rows):
    print(
        _table(
            rows,
            [
                ("model", lambda r: r["model"]),
                ("nq", lambda r: str(r["nq"])),
                ("steps", lambda r: str(r["steps"])),
                ("h (s)", lambda r: f"{r['h']:g}"),
                ("fj compile (s)", lambda r: f"{r['compile_s']:.2f}"),
                ("fj run (s)", lambda r: f"{r['run_s']:.3f}"),
                ("exu setup (s)", lambda r: f"{r['exudyn_setup_s']:.4f}"),
                ("exu run (s)", lambda r: f"{r['exudyn_run_s']:.3f}"),
                ("fj/exu time", lambda r: f"{r['time_ratio']:.2f}x"),
                ("Newton fj max/mean", lambda r: f"{r['newton_max']}/{r['newton_mean']:.2f}"),
                ("Newton exu mean (jac)", lambda r: f"{r['exudyn_newton_mean']:.2f} ({r['exudyn_jacobians']})"),
                ("|fj - exu| (m)", lambda r: f"{r['agreement']:.1e}"),
                ("tol (m)", lambda r: f"{r['tol']:.1e}"),
                ("agree", lambda r: "yes" if r["agree"] else "NO"),
            ],
        )
    )


def main(argv=None):
    a = parse_args(argv)
    _rerun_with_environment(a.blas_threads, a.host_devices, argv, script=__file__)
    exu = _exudyn()
    load_start = os.getloadavg()
    dev = jax.devices()[0]
    flat = {
        "flexjax_version": fj.__version__,
        "jax_version": jax.__version__,
        "exudyn_version": exu.__version__,
        "device": f"{dev.platform}:{dev.device_kind}",
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "dtype": str(jnp.zeros(()).dtype),
        "rho_inf": a.rho_inf,
        "repeat": a.repeat,
        "quick": a.quick,
        "tol_fraction": TOL_FRACTION,
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "load_avg_1min_start": load_start[0],
        "load_avg_5min_start": load_start[1],
    }
    print(
        f"flexjax {fj.__version__}, jax {jax.__version__}, exudyn {exu.__version__}; device {flat['device']}, "
        f"{os.cpu_count()} CPU cores, {flat['dtype']}, OPENBLAS_NUM_THREADS={flat['openblas_num_threads']}; "
        f"generalized-alpha rho_inf={a.rho_inf} (flexjax: default solver; Exudyn: defaults, absolute Newton "
        f"tolerance max(1e-10, {ROUNDOFF_TOLERANCE:g} EA)); median of {a.repeat} runs; load average "
        f"{load_start[0]:.1f} (1 min) at start",
        flush=True,
    )
    rows = []
    for name in a.models:
        rows.append(r := bench_model(name, a))
        print(
            f"  {name}: flexjax {r['run_s']:.3f} s, exudyn {r['exudyn_run_s']:.3f} s, "
            f"|diff| {r['agreement']:.1e} (tol {r['tol']:.1e})",
            file=sys.stderr,
            flush=True,
        )
    print("\nmodels (quantity compared at the end time):")
    for r in rows:
        print(
            f"  {r['model']}: {r['label']}; {r['steps']} steps to {r['t_end']:g} s; compares {r['quantity']} "
            f"(flexjax, last point: {', '.join(f'{x:.7f}' for x in r['flexjax_value'])} m)"
        )
    print(
        f"|fj - exu|: largest distance between the compared points; tol = {TOL_FRACTION:g} x the time-step "
        "error estimated from Exudyn at h and h/2\n"
    )
    print_table(rows)
    ratios = [r["time_ratio"] for r in rows]
    geomean = math.exp(statistics.fmean(math.log(x) for x in ratios))
    worst = max(rows, key=lambda r: r["time_ratio"])
    print(
        f"\nflexjax / Exudyn run time: geometric mean {geomean:.2f}x over {len(rows)} models, "
        f"worst {worst['time_ratio']:.2f}x ({worst['model']}); all agree: {all(r['agree'] for r in rows)}"
    )
    for r in rows:
        flat.update({f"{k}_{r['model']}": v for k, v in r.items() if k not in ("model", "label", "quantity")})
    flat.update(
        geomean_time_ratio=geomean,
        worst_time_ratio=worst["time_ratio"],
        worst_model=worst["model"],
        n_models=len(rows),
        all_agree=all(r["agree"] for r in rows),
    )
    if a.batch:
        run_batch_part(a, rows, flat)
    load_end = os.getloadavg()
    flat["load_avg_1min_end"], flat["load_avg_5min_end"] = load_end[0], load_end[1]
    print(
        f"load average (1 min) {load_start[0]:.1f} at start, {load_end[0]:.1f} at end on {os.cpu_count()} cores: "
        "wall times are noisy when it exceeds the core count"
    )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(flat, fh, indent=2)
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
