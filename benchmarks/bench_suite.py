r"""Model suite: flexjax against Exudyn on six planar flexible multibody models, side by side.

Run standalone (see benchmarks/README.md); Exudyn is needed (`pip install ".[bench]"`):

    python benchmarks/bench_suite.py --json suite.json             # all models, ~5 min
    python benchmarks/bench_suite.py --quick                       # shorter runs, no 64/256 elements, ~2 min
    python benchmarks/bench_suite.py --models slider_crank,chain --repeat 5

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
  experiments/flfj_control.py, $K_p(\theta_{ref} - \theta) - K_d\dot\theta$, on a 1 rad
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

import jax
import jax.numpy as jnp
import numpy as np

import flexjax as fj
from experiments.flfj_control import KD, KP
from flexjax.control.pd import PD, CoordinateControl
from flexjax.joints.ancf import AncfPin, AncfRevolute
from flexjax.models.clearance_arm import clearance_arm, clearance_arm_state
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

from bench_batch import _table  # same printed-table layout as the other benchmarks
from bench_peers import (AXIAL_ORDER, BENDING_ORDER, FLEX, G, ExudynPendulum, _aot, _exudyn, _median_run,
                         _rerun_with_environment, exudyn_settings)
from modal_kinetic_vs_ancf import D, E, RHO, ROTOR, JointSpring  # the FLFJ arm's rod, rotor and joint spring
from modal_kinetic_vs_ancf import L as FLFJ_LENGTH

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


# -- one element in both codes ------------------------------------------------------------------
def peer_beam(length, rho, area, second_moment, youngs, n_elements):
    """flexjax's planar ANCF beam with the measures and Gauss rules of Exudyn's cable."""
    return fj.AncfBeam2D(length, rho, area, second_moment, youngs, n_elements, strain="stretch",
                         axial_order=AXIAL_ORDER, bending_order=BENDING_ORDER)


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
    cable = eii.ObjectANCFCable2D(massPerLength=float(beam.rho) * A, bendingStiffness=E_ * float(beam.second_moment),
                                  axialStiffness=E_ * A, useReducedOrderIntegration=0)
    end = (start[0] + L * math.cos(angle), start[1] + L * math.sin(angle))
    return beams.GenerateBeamElementsAlongLine(mbs, [*start, 0.0], [*end, 0.0], beam.n_elements, cable,
                                               gravity=[*gravity, 0.0],
                                               groundConstraintsStart=[1, 1, 0, 0] if pinned else None)


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
    return [mbs.AddObject(eii.CoordinateConstraint(markerNumbers=[
        m_ground, mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=node, coordinate=c))])) for c in coordinates]


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

    def solve(self):
        self.pendulum.solve()
        return np.stack([node_position(self.mbs, k) for k in self.pendulum.info["nodes"]])


def tabulate(fn, t1, h):
    """`fn(t)` (a flexjax reference or load, in jnp) and its time derivative at the step
    times $t_k = k h$, k = 0..steps, as NumPy arrays: an Exudyn pre-step function looks
    them up instead of calling JAX."""
    ts = jnp.arange(round(t1 / h) + 1) * h
    value, rate = jax.vmap(lambda t: jax.jvp(fn, (t,), (jnp.ones_like(t),)))(ts)
    return np.asarray(value), np.asarray(rate)


class ExudynModel:
    """An Exudyn system built once by `build(mbs) -> (readout, pre_step, reset)` and solved
    from its initial state by `solve()`. `pre_step(mbs, k)` runs before step k -> k+1
    (Exudyn calls it with the step's end time); `reset()` restores what it changes to
    t = 0 before each run, since the initial accelerations are computed from it. `beams`:
    the model's flexjax beams, for the Newton tolerance (`suite_settings`)."""

    def __init__(self, build, beams, t1, h, rho_inf):
        exu = _exudyn()
        t = time.perf_counter()
        self.sc = exu.SystemContainer()
        self.mbs = self.sc.AddSystem()
        self.readout, pre_step, self.reset = build(self.mbs)
        if pre_step is not None:
            self.mbs.SetPreStepUserFunction(lambda mbs, t_end: pre_step(mbs, round(t_end / h) - 1) or True)
        self.mbs.Assemble()
        self.setup_s = time.perf_counter() - t
        self.settings = suite_settings(t1, h, rho_inf, beams)

    def solve(self):
        self.reset()
        if not self.mbs.SolveDynamic(self.settings):
            raise RuntimeError("Exudyn SolveDynamic failed")
        return np.atleast_2d(self.readout(self.mbs))


def node_position(mbs, node):
    """Position (x, y) of an Exudyn node in its current configuration (m)."""
    return np.asarray(mbs.GetNodeOutput(node, _exudyn().OutputVariableType.Position))[:2]


# -- the models -----------------------------------------------------------------------------------
class Model(NamedTuple):
    """`flexjax() -> (system, q0, v0, readout(q))`; `exudyn(t1, h, rho_inf)` -> an object
    with `setup_s`, `mbs` and `solve()` (`ExudynModel`, `ExudynPendulumNodes`). Both
    readouts give the compared points, one per row (a position, or the slider's x)."""

    label: str
    quantity: str
    h: float
    t1: float
    t1_quick: float | None  # None: left out of --quick
    flexjax: Callable
    exudyn: Callable


def flex_beam(n):
    """The very flexible pendulum's beam with `n` peer elements."""
    return peer_beam(FLEX["length"], FLEX["rho"], FLEX["area"], FLEX["second_moment"], FLEX["youngs"], n)


def pendulum(n, t1, t1_quick):
    """The very flexible pendulum of bench_peers.py with `n` elements (its Exudyn class).
    Every node is compared: within 0.1 s (the 256-element run) the pin's influence has
    not reached the tip yet, which falls freely."""
    def flexjax():
        beam = flex_beam(n)
        system = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -G))])
        q0 = beam.straight_coordinates()
        return system, q0, jnp.zeros_like(q0), beam.node_positions

    return Model(f"flexible pendulum, {n} elements", "all node positions", 5e-4, t1, t1_quick, flexjax,
                 lambda t1, h, rho_inf: ExudynPendulumNodes(n, t1, h, rho_inf))


def _slider_crank_parts():
    """Rod (peer element), slider, crank length, speed, gravity and the rod's and slider's
    initial state, all from `flexible_slider_crank` and its consistent start."""
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


def slider_crank_flexjax():
    """Rod and slider; the rod's first node on the crank tip's circle, the slider on y = 0."""
    rod, slider, crank, omega, g, (q0, v0) = _slider_crank_parts()
    joints = [fj.DrivingConstraint(0, lambda q: q[0:2], crank_tip(crank, omega), 2),  # rod node 0 on the crank tip
              AncfPin(0, -1, 1, (0.0, 0.0)), fj.coordinate_driver(1, 1, fj.ConstantRate(0.0, 0.0))]  # slider on y = 0
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
        for node, vel in zip(info["nodes"], v_nodes):
            mbs.SetNodeParameter(node, "initialVelocities", vel.tolist())
        s_node = mbs.AddNode(eii.NodePoint2D(referenceCoordinates=np.asarray(q0[-2:]).tolist()))
        s_body = mbs.AddObject(eii.MassPoint2D(mass=float(slider.mass), nodeNumber=s_node))
        mbs.AddLoad(eii.Gravity(markerNumber=mbs.AddMarker(eii.MarkerBodyMass(bodyNumber=s_body)),
                                loadVector=[*g, 0.0]))
        exudyn_pin(mbs, info["nodes"][-1], s_node)
        exudyn_coordinate_constraints(mbs, s_node, [1])
        drive = exudyn_coordinate_constraints(mbs, info["nodes"][0], [0, 1])

        def pre_step(mbs, k):
            for c, d in zip(drive, displacement[k + 1]):
                mbs.SetObjectParameter(c, "offset", float(d))

        return lambda mbs: node_position(mbs, s_node)[:1], pre_step, lambda: pre_step(mbs, -1)

    return ExudynModel(build, [rod], t1, h, rho_inf)


def _arm():
    """The ideal-elbow arm with peer links, built from `clearance_arm`'s joints and PIDs."""
    base = clearance_arm()
    system = fj.System([as_peer_beam(b) for b in base.bodies], base.joints, base.force_elements)
    return system, *clearance_arm_state(system)


def arm_flexjax():
    """The arm as built; the compared point is the tip P."""
    system, q0, v0 = _arm()
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
        pairs = [(rigid(mbs.AddObject(eii.ObjectGround()), 0.0), rigid(info1["elements"][0], 0.0)),  # joint 1 at O
                 (rigid(info1["elements"][-1], le1), rigid(info2["elements"][0], 0.0))]  # joint 2 at the elbow
        # torque on the driven side: -(Kp (theta - offset) + Kd (omega - velocityOffset) + torque)
        joints = [mbs.AddObject(eii.TorsionalSpringDamper(markerNumbers=list(m), stiffness=kp, damping=kd))
                  for m, (kp, _, kd) in zip(pairs, gains)]
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

        return lambda mbs: node_position(mbs, info2["nodes"][-1]), pre_step, reset

    return ExudynModel(build, links, t1, h, rho_inf)


def _flfj_rod():
    """The 2 mm steel rod, given as modal_kinetic_vs_ancf.ancf gives it (unit area: rho is rho A)."""
    EA, EI, rho_a = E * np.pi * D**2 / 4, E * np.pi * D**4 / 64, RHO * np.pi * D**2 / 4
    return peer_beam(FLFJ_LENGTH, rho_a, 1.0, EI / EA, EA, FLFJ_ELEMENTS)  # as modal_kinetic_vs_ancf.ancf


def _flfj_pd():
    """flfj_control's PD law on the rotor angle, on a smooth 1 rad rest-to-rest reference."""
    return PD(KP, KD, fj.RestToRest(FLFJ_MOVE, FLFJ_MOVE_TIME))


def flfj_flexjax():
    """Rotor (body 0) pinned at its centre, rod (body 1) pinned there, PD motor, joint spring."""
    rod = _flfj_rod()
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
        motor = mbs.AddObject(eii.TorsionalSpringDamper(markerNumbers=[m_ground, m_rotor], stiffness=float(pd.kp),
                                                        damping=float(pd.kd)))

        def pre_step(mbs, k):
            mbs.SetObjectParameter(motor, "offset", float(reference[k + 1]))

        return lambda mbs: node_position(mbs, info["nodes"][-1]), pre_step, lambda: pre_step(mbs, -1)

    return ExudynModel(build, [rod], t1, h, rho_inf)


def _chain_links():
    """The chain's links, all alike."""
    return [peer_beam(CHAIN["length"], CHAIN["rho"], CHAIN["area"], CHAIN["second_moment"], CHAIN["youngs"],
                      CHAIN_ELEMENTS) for _ in range(CHAIN_LINKS)]


def chain_flexjax():
    """Links along +x from the origin, pinned end to end, the first to the ground."""
    links = _chain_links()
    joints = [AncfPin(0, 0)] + [AncfRevolute(i, -1, i + 1, 0) for i in range(CHAIN_LINKS - 1)]
    system = fj.System(links, joints, [fj.Gravity((0.0, -G))])
    L = CHAIN["length"]
    q0 = jnp.concatenate([b.straight_coordinates((i * L, 0.0)) for i, b in enumerate(links)])
    return system, q0, jnp.zeros_like(q0), lambda q: links[-1].node_position(q[system.body_slice(CHAIN_LINKS - 1)], -1)


def chain_exudyn(t1, h, rho_inf):
    """The same chain; separate end nodes joined by `RevoluteJoint2D`s, as `AncfRevolute`."""
    links = _chain_links()

    def build(mbs):
        infos = [exudyn_cable(mbs, b, (i * CHAIN["length"], 0.0), gravity=(0.0, -G), pinned=i == 0)
                 for i, b in enumerate(links)]
        for a, b in zip(infos, infos[1:]):
            exudyn_pin(mbs, a["nodes"][-1], b["nodes"][0])
        return lambda mbs: node_position(mbs, infos[-1]["nodes"][-1]), None, lambda: None

    return ExudynModel(build, links, t1, h, rho_inf)


MODELS = {
    "pendulum16": pendulum(16, 1.0, 1.0),
    "pendulum64": pendulum(64, 1.0, None),
    "pendulum256": pendulum(256, 0.1, None),
    "slider_crank": Model("flexible slider-crank, rod 4 elements, 150 rad/s", "slider x", 1e-4, 0.2, 0.05,
                          slider_crank_flexjax, slider_crank_exudyn),
    "two_link_arm": Model("two-link ANCF arm, ideal elbow, PID", "tip (x, y)", 2e-4, 2.0, 0.4,
                          arm_flexjax, arm_exudyn),
    "flfj_arm": Model("FLFJ arm: rotor under PD, torsion spring, rod 8 elements", "tip (x, y)", 5e-4, 2.0, 0.5,
                      flfj_flexjax, flfj_exudyn),
    "chain": Model(f"chain of {CHAIN_LINKS} links x {CHAIN_ELEMENTS} elements", "tip (x, y)", 5e-4, 1.0, 0.5,
                   chain_flexjax, chain_exudyn),
}


# -- measurement --------------------------------------------------------------------------------------
def flexjax_run(model, t1, rho_inf, save_every=None):
    """`f() -> (quantity, largest Newton iterations per step, success)` with flexjax's default
    solver; `save_every=None` keeps only the final state. Also returns the system."""
    system, q0, v0, readout = model.flexjax()
    steps = round(t1 / model.h)

    def f():
        tr = fj.simulate(system, q0, v0, t1, model.h, solver=fj.GeneralizedAlpha(rho_inf=rho_inf),
                         save_every=save_every or steps, throw=False)
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
        "model": name, "label": model.label, "quantity": model.quantity, "nq": system.nq, "steps": steps,
        "h": model.h, "t_end": t1,
        "compile_s": compile_s, "run_s": fj_run, "exudyn_setup_s": ex.setup_s, "exudyn_run_s": ex_run,
        "time_ratio": fj_run / ex_run,
        "flexjax_value": x_fj[-1].tolist(), "exudyn_value": x_ex[-1].tolist(),  # the last point: tip or slider
        "agreement": diff, "time_step_error": err_h,
        "tol": tol, "agree": diff <= tol and bool(ok), "flexjax_ok": bool(ok),
        "newton_max": int(np.max(iters)), "newton_mean": float(np.mean(iters_all)),
        "exudyn_newton_mean": ex_newton / steps, "exudyn_jacobians": int(ex_jac),
        "exudyn_absolute_tolerance": ex.settings.timeIntegration.newton.absoluteTolerance,
    }


# -- report ----------------------------------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=None,
                   help=f"models to run, comma- or space-separated (default all; --quick: those with a quick end "
                        f"time): {', '.join(MODELS)}")
    p.add_argument("--quick", action="store_true", help="shorter end times, without pendulum64 and pendulum256")
    p.add_argument("--repeat", type=int, default=3, help="warm runs per code; the median is reported")
    p.add_argument("--rho-inf", type=float, default=0.9, help="generalized-alpha spectral radius (both codes)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="OpenBLAS/OpenMP threads (default 1, as Exudyn's default single thread); 0 leaves the "
                        "environment as it is")
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
    if a.repeat < 1 or not 0 <= a.rho_inf < 1:
        p.error("--repeat must be >= 1 and 0 <= --rho-inf < 1 (index-3 Exudyn)")
    return a


def print_table(rows):
    print(_table(rows, [
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
    ]))


def main(argv=None):
    a = parse_args(argv)
    _rerun_with_environment(a.blas_threads, 1, argv, script=__file__)
    exu = _exudyn()
    load_start = os.getloadavg()
    dev = jax.devices()[0]
    flat = {
        "flexjax_version": fj.__version__, "jax_version": jax.__version__, "exudyn_version": exu.__version__,
        "device": f"{dev.platform}:{dev.device_kind}", "cpu_count": os.cpu_count(), "machine": platform.machine(),
        "dtype": str(jnp.zeros(()).dtype), "rho_inf": a.rho_inf, "repeat": a.repeat, "quick": a.quick,
        "tol_fraction": TOL_FRACTION, "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "load_avg_1min_start": load_start[0], "load_avg_5min_start": load_start[1],
    }
    print(f"flexjax {fj.__version__}, jax {jax.__version__}, exudyn {exu.__version__}; device {flat['device']}, "
          f"{os.cpu_count()} CPU cores, {flat['dtype']}, OPENBLAS_NUM_THREADS={flat['openblas_num_threads']}; "
          f"generalized-alpha rho_inf={a.rho_inf} (flexjax: default solver; Exudyn: defaults, absolute Newton "
          f"tolerance max(1e-10, {ROUNDOFF_TOLERANCE:g} EA)); median of {a.repeat} runs; load average "
          f"{load_start[0]:.1f} (1 min) at start", flush=True)
    rows = []
    for name in a.models:
        rows.append(r := bench_model(name, a))
        print(f"  {name}: flexjax {r['run_s']:.3f} s, exudyn {r['exudyn_run_s']:.3f} s, "
              f"|diff| {r['agreement']:.1e} (tol {r['tol']:.1e})", file=sys.stderr, flush=True)
    print("\nmodels (quantity compared at the end time):")
    for r in rows:
        print(f"  {r['model']}: {r['label']}; {r['steps']} steps to {r['t_end']:g} s; compares {r['quantity']} "
              f"(flexjax, last point: {', '.join(f'{x:.7f}' for x in r['flexjax_value'])} m)")
    print(f"|fj - exu|: largest distance between the compared points; tol = {TOL_FRACTION:g} x the time-step "
          "error estimated from Exudyn at h and h/2\n")
    print_table(rows)
    ratios = [r["time_ratio"] for r in rows]
    geomean = math.exp(statistics.fmean(math.log(x) for x in ratios))
    worst = max(rows, key=lambda r: r["time_ratio"])
    print(f"\nflexjax / Exudyn run time: geometric mean {geomean:.2f}x over {len(rows)} models, "
          f"worst {worst['time_ratio']:.2f}x ({worst['model']}); all agree: {all(r['agree'] for r in rows)}")
    for r in rows:
        flat.update({f"{k}_{r['model']}": v for k, v in r.items() if k not in ("model", "label", "quantity")})
    flat.update(geomean_time_ratio=geomean, worst_time_ratio=worst["time_ratio"], worst_model=worst["model"],
                n_models=len(rows), all_agree=all(r["agree"] for r in rows))
    load_end = os.getloadavg()
    flat["load_avg_1min_end"], flat["load_avg_5min_end"] = load_end[0], load_end[1]
    print(f"load average (1 min) {load_start[0]:.1f} at start, {load_end[0]:.1f} at end on {os.cpu_count()} cores: "
          "wall times are noisy when it exceeds the core count")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(flat, fh, indent=2)
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
