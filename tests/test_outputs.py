"""Output helpers: `BodyPoint`, `BeamDeflection`, `joint_reaction`, checked against
closed forms (exact cubic beam shapes, a pendulum's coordinates and its static pin load)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models
from flexjax.analysis import transverse_modes
from flexjax.bodies import AncfBeam2D, AncfBeam3D, ModalHubBeam, RectangularSection
from flexjax.outputs import BeamDeflection, BodyPoint, Outputs, joint_reaction

G = 9.81


@pytest.fixture(scope="module")
def swinging():
    system = models.pendulum(2.0, 1.0, G)
    q0, v0 = models.pendulum_state(0.6)
    return system, fj.simulate(system, q0, v0, 0.5, 0.01, save_every=5, outputs=BodyPoint(system, 0, [1.0, 0.0]))


def test_body_point_of_a_pendulum_tip_is_its_coordinates(swinging):
    system, traj = swinging
    out = jax.vmap(BodyPoint(system, 0, [1.0, 0.0]))(traj.t, traj.q, traj.v)
    np.testing.assert_allclose(out["position"], traj.q[:, 2:4], atol=1e-15)
    np.testing.assert_allclose(out["velocity"], traj.v[:, 2:4], atol=1e-15)
    # the same helper as `simulate(..., outputs=...)`: saved at the saved instants
    np.testing.assert_allclose(traj.outputs["position"], traj.q[:, 2:4], atol=1e-15)
    np.testing.assert_allclose(traj.outputs["velocity"], traj.v[:, 2:4], atol=1e-15)
    # an off-axis point: r = r_i + R(theta) p (the bar stays at length L to the solver
    # tolerance); the natural coordinates are linear in the point, so its velocity is
    # v_i + (x d' + y R90 d') / L exactly, for any v
    p = jnp.array([0.5, 0.1])
    out = jax.vmap(BodyPoint(system, 0, p))(traj.t, traj.q, traj.v)
    theta = np.arctan2(traj.q[:, 3], traj.q[:, 2])
    c, s = np.cos(theta), np.sin(theta)
    np.testing.assert_allclose(out["position"], np.stack([c * p[0] - s * p[1], s * p[0] + c * p[1]], 1), atol=1e-9)
    dd = np.asarray(traj.v[:, 2:4] - traj.v[:, 0:2])
    expected = np.asarray(traj.v[:, 0:2]) + p[0] * dd + p[1] * np.stack([-dd[:, 1], dd[:, 0]], 1)
    np.testing.assert_allclose(out["velocity"], expected, atol=1e-14)


def _cubic(x):
    # w(x) = 0.01 x^2 - 0.004 x^3: w(0) = w'(0) = 0, exactly representable by cubic elements
    return 0.01 * x**2 - 0.004 * x**3, 0.02 * x - 0.012 * x**2


def _rotate2(q, angle, shift):
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    nodes = np.reshape(np.asarray(q), (-1, 2, 2))  # [r, r'] per node
    nodes = np.einsum("ij,nkj->nki", R, nodes) + np.array([shift, [0.0, 0.0]])[None]
    return jnp.asarray(nodes.reshape(-1))


def test_beam_deflection_of_a_planar_ancf_beam_is_rigid_motion_free():
    n, L = 2, 1.0
    beam = AncfBeam2D(L, 7800.0, 1e-4, 1e-9, 2e11, n)
    x = np.linspace(0.0, L, n + 1)
    w, dw = _cubic(x)
    q = np.stack([x, w, np.ones_like(x), dw], axis=1).reshape(-1)
    q = _rotate2(q, 0.7, [0.3, -0.2])
    system = fj.System([beam])
    for s in (0.25, 0.5, 1.0):
        assert float(BeamDeflection(system, 0, s)(0.0, q, jnp.zeros_like(q))) == pytest.approx(_cubic(s)[0], rel=1e-12)


def test_beam_deflection_of_a_3d_ancf_beam():
    n, L = 2, 1.0
    beam = AncfBeam3D(L, 7800.0, 2e11, RectangularSection(0.01, 0.01), n)
    x = np.linspace(0.0, L, n + 1)
    wy, dwy = _cubic(x)
    wz, dwz = -0.5 * wy, -0.5 * dwy
    nodes = np.zeros((n + 1, 4, 3))
    nodes[:, 0] = np.stack([x, wy, wz], 1)
    nodes[:, 1] = np.stack([np.ones_like(x), dwy, dwz], 1)
    nodes[:, 2], nodes[:, 3] = [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    a = 0.4  # rotate the whole beam about the z-axis and shift it
    R = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    nodes = np.einsum("ij,nkj->nki", R, nodes)
    nodes[:, 0] += [1.0, 2.0, 3.0]
    q = jnp.asarray(nodes.reshape(-1))
    out = BeamDeflection(fj.System([beam]), 0, 0.75)(0.0, q, jnp.zeros_like(q))
    w = _cubic(0.75)[0]
    np.testing.assert_allclose(out, [w, -0.5 * w], rtol=1e-12)


def test_beam_deflection_of_a_modal_beam_is_the_modal_sum():
    beam = ModalHubBeam(0.002, 1.0, 0.0247, 6.5e5, 0.16, 1.0, n_axial=0, n_transverse=3)
    q = jnp.array([0.9, 1e-3, -2e-4, 5e-5])  # hub angle, three transverse coordinates
    out = eqx.filter_jit(BeamDeflection(fj.System([beam]), 0, 0.6))(0.0, q, jnp.zeros(4))
    modal = transverse_modes(beam.roots(), jnp.array([0.6])) @ q[1:]
    assert float(out) == pytest.approx(float(modal[0]), rel=1e-12)


def test_joint_reaction_of_a_pendulum_at_rest_carries_its_weight_and_its_gradient():
    def pin_load(mass):
        system = models.pendulum(mass, 1.0, G)
        traj = fj.simulate(system, *models.pendulum_state(0.0), 0.02, 0.01)
        return joint_reaction(system, traj, 0)

    reaction = pin_load(2.0)
    np.testing.assert_allclose(reaction.generalized_force[-1], [0.0, 2.0 * G, 0.0, 0.0], atol=1e-9)
    assert reaction.multipliers.shape == (3, 2)
    grad = jax.jvp(lambda m: pin_load(m).generalized_force[-1, 1], (2.0,), (1.0,))[1]  # forward mode
    assert float(grad) == pytest.approx(G, rel=1e-9)  # d(m g)/dm


def test_named_outputs_combine_helpers(swinging):
    system, traj = swinging
    both = Outputs(tip=BodyPoint(system, 0, [1.0, 0.0]), mid=BodyPoint(system, 0, [0.5, 0.0]))
    out = jax.vmap(both)(traj.t, traj.q, traj.v)
    np.testing.assert_allclose(out["tip"]["position"], traj.q[:, 2:4], atol=1e-15)
    np.testing.assert_allclose(out["mid"]["position"], 0.5 * traj.q[:, 2:4], atol=1e-15)
    with pytest.raises(ValueError, match="tip"):
        Outputs(tip=1.0)


def test_equal_helpers_are_equal_structures():
    a = BodyPoint(models.pendulum(), 0, [1.0, 0.0])
    b = BodyPoint(models.pendulum(), 0, [1.0, 0.0])
    assert eqx.tree_equal(a, b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    assert hash(jax.tree_util.tree_structure(a)) == hash(jax.tree_util.tree_structure(b))


def test_bad_arguments_raise_value_error(swinging):
    system, traj = swinging
    with pytest.raises(ValueError, match="body"):
        BodyPoint(system, 3, [1.0, 0.0])
    with pytest.raises(ValueError, match="point"):
        BodyPoint(system, 0, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="body"):
        BeamDeflection(system, 0, 0.5)
    with pytest.raises(ValueError, match="joint_index"):
        joint_reaction(system, traj, 1)
