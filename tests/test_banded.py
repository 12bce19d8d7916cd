"""`flexjax.solvers._structure` and `flexjax.solvers._banded`: bordered banded factor and
solves against dense LAPACK, the compressed Jacobian against `jax.jacfwd` on ANCF systems,
the declared sparsity against the Jacobians of every model, and the pattern check."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models
from flexjax.forces.ancf import AncfNodeTorque, DistributedLoad
from flexjax.forces.base import AbstractForce
from flexjax.forces.loads3d import AppliedMoment3D, DistributedLoad3D
from flexjax.joints.ancf import AncfClamp, AncfPin, AncfRevolute
from flexjax.joints.ancf3d import AncfClamp3D, AncfRevolute3D, AncfRigidConnection3D, AncfSpherical3D
from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state
from flexjax.models.parallel_robot import kinematic_state, parallel_robot
from flexjax.solvers import _banded as banded, _structure as structure
from flexjax.solvers._structure import NewtonStructure


# -- random bordered banded matrices ----------------------------------------------------------
def bordered(seed, border=(5, 31), kind="random", n=48, b=3, block=4):
    """A matrix with the sparsity of `NewtonStructure(n, order, border, b, block)` (a
    shuffled band order, the same for every seed): random entries with a zero diagonal,
    so that elimination must pivot, or (`kind="permutation"`) a permutation matrix
    inside the band, no diagonal entry and one pivot per column."""
    rest = np.array([v for v in range(n) if v not in border])
    order = rest[np.random.default_rng(0).permutation(len(rest))]
    st = NewtonStructure(n, tuple(int(v) for v in order), tuple(border), b, block)
    rng = np.random.default_rng(seed)
    A = np.zeros((n, n))
    p = np.arange(len(order))
    if kind == "permutation":  # reverses groups of (up to) 4 band positions: |p - p'| <= 3
        size = np.minimum(4, len(p) - p // 4 * 4)
        A[order, order[p // 4 * 4 + size - 1 - p % 4]] = 1.0
        A[border, border] = 1.0
    else:
        near = np.abs(p[:, None] - p[None, :]) <= b
        A[np.ix_(order, order)] = np.where(near, rng.standard_normal(near.shape), 0.0)
        A[list(border), :] = rng.standard_normal((len(border), n))
        A[:, list(border)] = rng.standard_normal((n, len(border)))
        A[np.arange(n), np.arange(n)] = 0.0
    return jnp.asarray(A), st


@jax.jit
def _everything(J, r):
    """matvec, dense form, solve and transposed solve: one compiled program per structure."""
    F = banded.factor(J)
    return structure.matvec(J, r), structure.to_dense(J), banded.solve(F, r), banded.solve_transpose(F, r)


@pytest.mark.parametrize("border", [(5, 31), ()])
@pytest.mark.parametrize("kind", ["random", "permutation"])
def test_factor_and_solves_equal_lapack(border, kind):
    A, st = bordered(0, border, kind)
    r = jnp.asarray(np.random.default_rng(1).standard_normal(st.n))
    Ar, D, x, xt = _everything(structure.from_dense(A, st), r)
    np.testing.assert_array_equal(D, A)
    np.testing.assert_allclose(Ar, A @ r, rtol=1e-14, atol=1e-13)
    for sol, ref in ((x, np.linalg.solve(A, r)), (xt, np.linalg.solve(A.T, r))):
        assert np.max(np.abs(sol - ref)) <= 1e-12 * np.max(np.abs(ref))


def test_singular_is_not_finite():
    A, st = bordered(2, ())
    A = A.at[:, 10].set(0.0)
    assert not np.all(np.isfinite(_everything(structure.from_dense(A, st), jnp.ones(st.n))[2]))


def test_vmap_equals_loop():
    mats = [structure.from_dense(*bordered(seed)) for seed in (3, 4, 5)]
    Js = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *mats)
    R = jnp.asarray(np.random.default_rng(6).standard_normal((3, mats[0].structure.n)))
    batched = jax.jit(jax.vmap(lambda J, r: banded.solve(banded.factor(J), r)))(Js, R)
    for J, r, x in zip(mats, R, batched, strict=True):
        np.testing.assert_allclose(x, _everything(J, r)[2], rtol=1e-13, atol=1e-13)
    shapes = lambda F: jax.tree_util.tree_map(lambda a: (a.shape, a.dtype), F)
    assert shapes(banded.zeros(mats[0].structure)) == shapes(jax.eval_shape(banded.factor, mats[0]))


def test_gradient_matches_dense_solve():
    """`jax.grad` of w . J^{-1} b: against the dense solve's, -(J^{-T} w)(J^{-1} b)^T and J^{-T} w."""
    A, st = bordered(7)
    rng = np.random.default_rng(8)
    b, w = (jnp.asarray(rng.standard_normal(st.n)) for _ in range(2))
    loss = lambda A, b: w @ banded.linear_solve(structure.from_dense(A, st), b)
    gA, gb = jax.jit(jax.grad(loss, (0, 1)))(A, b)
    db = np.linalg.solve(A.T, w)
    dA = -np.outer(db, np.linalg.solve(A, b))
    inside = np.asarray(structure.to_dense(structure.from_dense(jnp.ones_like(A), st))) != 0
    np.testing.assert_allclose(gb, db, rtol=0, atol=1e-12 * np.max(np.abs(db)))
    np.testing.assert_allclose(gA, np.where(inside, dA, 0.0), rtol=0, atol=1e-12 * np.max(np.abs(dA)))


# -- Newton matrices of systems ---------------------------------------------------------------
def newton_residual(system, q, v, index2=False, h=1e-3, rho_inf=0.9):
    """The residual of one generalized-α step from `(q, v)` (as `GeneralizedAlpha.step`)."""
    alpha_m, alpha_f, gamma, beta = fj.GeneralizedAlpha(rho_inf=rho_inf).coefficients()
    nq, m = q.shape[0], system.nconstraints
    beta_h2 = beta * (1 - alpha_f) / (1 - alpha_m) * h**2
    gamma_h = gamma * (1 - alpha_f) / (1 - alpha_m) * h
    a = qdd_n = 0.1 * jnp.cos(jnp.arange(nq))
    Phi_q_n = system.constraints_q(q, 0.0) if index2 else None

    def residual(x):
        qdd, lam = x[:nq], x[nq : nq + m]
        a1 = ((1 - alpha_f) * qdd + alpha_f * qdd_n - alpha_m * a) / (1 - alpha_m)
        q1 = q + h * v + h**2 * (0.5 - beta) * a + h**2 * beta * a1
        v1 = v + h * (1 - gamma) * a + h * gamma * a1
        if index2:
            q1 = q1 + beta_h2 * Phi_q_n.T @ x[nq + m :]
        Phi, Phi_vjp = jax.vjp(lambda p: system.constraints(p, h), q1)
        rows = [system.mass(q1) @ qdd + Phi_vjp(lam)[0] - system.forces(q1, v1, h), Phi / beta_h2]
        if index2:
            rows.append(system.constraint_velocity(q1, v1, h) / gamma_h)
        return jnp.concatenate(rows)

    return residual, nq + m * (2 if index2 else 1)


def random_state(q0, v0, seed=0):
    rng = np.random.default_rng(seed)
    return (
        q0 + 1e-2 * jnp.asarray(rng.standard_normal(q0.shape)),
        v0 + 0.1 * jnp.asarray(rng.standard_normal(q0.shape)),
    )


def compare(system, q0, v0, index2=False, **limits):
    """(st, compressed J as dense, jacfwd, probe error) at a random state."""
    st = structure.newton_structure(system, index2, **limits)
    assert st is not None
    residual, n = newton_residual(system, *random_state(q0, v0), index2=index2)
    x = jnp.asarray(np.random.default_rng(1).standard_normal(n))

    @jax.jit
    def both(x):
        value, J = structure.value_and_jacobian(residual, x, st)
        J_ref, value_ref = jax.jacfwd(lambda x: (residual(x),) * 2, has_aux=True)(x)
        assert_close = lambda a, b: jnp.max(jnp.abs(a - b)) <= 1e-14 * jnp.max(jnp.abs(b))
        return structure.to_dense(J), J_ref, structure.probe_error(J), assert_close(value, value_ref)

    J, J_ref, err, value_ok = both(x)
    assert value_ok
    return st, J, J_ref, err


def beam(n, length=1.2):
    return fj.AncfBeam2D(length, 5540.0, 0.0018, 1.215e-8, 0.7e6, n)


def pendulum(n=30):
    b = beam(n)
    q0 = b.straight_coordinates()
    return fj.System([b], [AncfPin(0, 0)], [fj.Gravity((0.0, -9.81))]), q0, jnp.zeros_like(q0)


def chain():
    """Three beams pinned at one end and joined by pins (the second one welded), in a
    shuffled body order, the tip clamped to a rigid body; every planar load type."""
    beams = [beam(10, 0.4) for _ in range(3)]
    joints = [AncfPin(0, 0), AncfRevolute(0, -1, 2, 0), AncfRevolute(2, -1, 1, 0, rigid=True), AncfClamp(1, -1, 3)]
    forces = [
        fj.Gravity((0.0, -9.81)),
        fj.AppliedTorque(1, lambda t: 2.0, reaction_body=0),
        fj.PointForce(1, jnp.array([0.3]), lambda t: jnp.array([1.0, 2.0])),
        DistributedLoad(2, (0.0, 3.0)),
        AncfNodeTorque(0, 2, lambda t: 1.0, reaction_body=2, reaction_node=1),
    ]
    q0 = jnp.concatenate(
        [
            beams[0].straight_coordinates(),
            beams[1].straight_coordinates((0.8, 0.0)),
            beams[2].straight_coordinates((0.4, 0.0)),
            jnp.array([1.2, 0.0, 0.0]),
        ]
    )
    return fj.System(beams + [fj.RigidBody2D(1.0, 0.1)], joints, forces), q0, jnp.zeros_like(q0)


def cantilever3d(n=3):
    """A clamped 3D beam continued rigidly by a second one, which a hinge holds and whose
    tip carries a rigid body on a ball joint; a moment at a node, a distributed load."""
    beams = [
        fj.AncfBeam3D(0.5, 7850.0, 210e9, fj.RectangularSection(0.02, 0.01), n, formulation="continuum")
        for _ in range(2)
    ]  # the continuum law compiles faster than the split one; same element windows
    joints = [
        AncfClamp3D(0, 0),
        AncfRigidConnection3D(1, 0, 0, -1),
        AncfSpherical3D(1, -1, 2, (0.1, 0.0, 0.0)),
        AncfRevolute3D(1, 1, (0.0, 0.0, 1.0), None, (2 / 3, 0.0, 0.0)),
    ]
    forces = [
        fj.Gravity((0.0, 0.0, -9.81)),
        DistributedLoad3D(0, (0.0, 10.0, 0.0)),
        AppliedMoment3D(1, lambda t: jnp.array([0.0, 1.0, 1.0]), node=1, follower=True),
    ]
    q0 = jnp.concatenate(
        [
            beams[0].straight_coordinates(),
            beams[1].straight_coordinates((0.5, 0.0, 0.0)),
            jnp.array([1.1, 0.0, 0.0]),
            jnp.eye(3).reshape(-1),
        ]
    )
    return fj.System(beams + [fj.RigidBody3D(1.0, jnp.eye(3) * 0.01)], joints, forces), q0, jnp.zeros_like(q0)


def star(n=12):
    """A beam glued to a rigid hub at every node: the hub's coordinates meet every node
    (a border)."""
    hub, b = fj.RigidBody2D(1.0, 0.1), beam(n, 0.6)
    joints = [fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0])] + [
        AncfPin(1, k, 0, (0.6 * k / n, 0.0)) for k in range(n + 1)
    ]
    q0 = jnp.concatenate([jnp.zeros(3), b.straight_coordinates()])
    return fj.System([hub, b], joints, [fj.Gravity((0.0, -9.81))]), q0, jnp.zeros_like(q0)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param((pendulum, True, {}), id="pendulum-index2"),
        pytest.param((chain, False, {}), id="chain"),
        pytest.param((cantilever3d, False, dict(min_size=0, lane_ratio=1)), id="cantilever3d"),
        pytest.param((star, False, dict(min_size=0, lane_ratio=1)), id="star-border"),
    ],
)
def test_compressed_jacobian_equals_jacfwd(case):
    build, index2, limits = case
    system, q0, v0 = build()
    st, J, J_ref, err = compare(system, q0, v0, index2, **limits)
    assert st.passes <= st.n / (1 if limits else 2) and bool(st.border) == (build is star)
    assert np.max(np.abs(J - J_ref)) <= 1e-14 * np.max(np.abs(J_ref))
    assert err <= 1e-13
    nonzero, k = np.asarray(J_ref) != 0, system.nq + system.nconstraints
    assert not np.any(nonzero & ~structure.pattern(system, index2))
    assert not np.any(nonzero[:k, :k] & ~structure.pattern(system))  # the index-3 matrix's entries


def test_pendulum_structure_is_narrow():
    system, _, _ = pendulum(256)
    st = structure.newton_structure(system)
    assert st.n == 1030 and st.bandwidth <= 9 and not st.border and st.passes <= 20
    traced = []
    eqx.filter_jit(lambda system: traced.append(structure.newton_structure(system)))(system)  # static layout only
    assert traced == [st] and hash(traced[0]) == hash(st)


@pytest.mark.parametrize(
    "build",
    [
        lambda: models.slider_crank(),
        lambda: models.double_pendulum(),
        lambda: parallel_robot(rigid=True),
        lambda: parallel_robot(),
        lambda: models.mobile_robot(),
        lambda: pendulum(4)[0],
    ],
    ids=["slider-crank", "double-pendulum", "robot-rigid", "robot", "mobile-robot", "small-pendulum"],
)
def test_dense_where_banded_does_not_pay(build):
    assert structure.newton_structure(build()) is None


def _models():
    arm = models.clearance_arm(clearance=1e-4)
    robot = parallel_robot(n_elements=1)
    impact, _ = models.impact_beam()
    impact_ancf, _ = models.impact_beam_ancf(3)
    crank = flexible_slider_crank(n_elements=3)
    return [
        ("double-pendulum", models.double_pendulum(), models.double_pendulum_state(0.3, -0.2)),
        ("slider-crank", models.slider_crank(), models.slider_crank_state()),
        ("flexible-slider-crank", crank, flexible_slider_crank_state(crank)),
        ("clearance-arm", arm, models.clearance_arm_state(arm)),
        ("impact-beam-modal", impact, models.impact_beam_state()),
        ("impact-beam-ancf", impact_ancf, models.impact_beam_ancf_state(3)),
        ("parallel-robot", robot, kinematic_state(robot)),
    ]


def assert_pattern_covers(name, system, state):
    """At a random state, every nonzero of the dense Newton matrix lies inside the declared
    pattern. The index-2 matrix holds the index-3 one as its leading block (at another
    state): one Jacobian checks both."""
    residual, n = newton_residual(system, *random_state(*state), index2=True)
    x = jnp.asarray(np.random.default_rng(2).standard_normal(n))
    J = np.asarray(jax.jit(jax.jacfwd(residual))(x)) != 0
    k = system.nq + system.nconstraints
    for index2, Jk in ((True, J), (False, J[:k, :k])):
        outside = Jk & ~structure.pattern(system, index2)
        assert not outside.any(), (name, index2, np.argwhere(outside)[:5])


@pytest.mark.slow  # ~2 min: one Newton-matrix compile per model (the robot's is the longest); the
# declared types are all covered by the chain and the 3D cantilever above
def test_declared_pattern_covers_every_model():
    for name, system, state in _models():
        assert_pattern_covers(name, system, state)


class _TipToRoot(AbstractForce):
    """Declares `separable` (true: one body) but couples the beam's root with its tip,
    two elements apart: against the beam's `ElementChain` promise."""

    stiffness: float
    bodies: tuple[int, ...] = eqx.field(static=True, default=(0,))
    dim: ClassVar[int] = 2
    separable: ClassVar[bool] = True

    def force(self, bodies, qs, vs, t):
        beam, q = bodies[0], qs[0]
        pull = lambda q: 0.5 * self.stiffness * jnp.sum((beam.node_position(q, -1) - beam.node_position(q, 0)) ** 2)
        return (-jax.grad(pull)(q),)

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())


def test_wrong_declaration_is_detected():
    system, q0, v0 = pendulum()
    system = fj.System(system.bodies, system.joints, system.force_elements + (_TipToRoot(1e3),))
    _, J, J_ref, err = compare(system, q0, v0)
    assert np.max(np.abs(J - J_ref)) > 0 and err > 1e-3
