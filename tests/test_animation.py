"""`Trajectory.animate`: GIF frames of planar and spatial systems, a few frames only."""

import equinox as eqx
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest
from PIL import Image

import flexjax as fj
from flexjax import animation, models
from flexjax.bodies import AncfBeam3D, RectangularSection, RigidBody2D, straight_beam_coordinates_3d


@pytest.fixture(scope="module")
def pendulum_run():
    system = models.pendulum()
    return system, fj.simulate(system, *models.pendulum_state(0.5), 0.4, 0.01, save_every=2)


def test_planar_gif_has_one_frame_per_clock_tick_and_leaves_the_backend(tmp_path, pendulum_run):
    system, traj = pendulum_run
    before = matplotlib.get_backend()
    path = traj.animate(system, tmp_path / "pendulum.gif", fps=10, title="pendulum")
    assert path.read_bytes()[:4] == b"GIF8"
    with Image.open(path) as im:
        assert im.n_frames == 5  # t = 0, 0.1, ..., 0.4 s
    assert matplotlib.get_backend() == before


def test_frames_are_the_saved_instants_nearest_to_the_clock():
    t = np.array([0.0, 0.1, 0.2, 0.3, 0.4, np.inf])  # an event stopped the run: inf after it
    np.testing.assert_array_equal(animation._frame_indices(t, 3, 1.0, 100), [0, 3])  # clock 0, 1/3 s
    np.testing.assert_array_equal(animation._frame_indices(t, 10, 2.0, 100), [0, 2, 4])  # twice as fast
    np.testing.assert_array_equal(animation._frame_indices(t, 100, 1.0, 3), [0, 2, 4])  # thinned to max_frames


def test_spatial_beam_and_a_frame_drawn_body(tmp_path, pendulum_run):
    _, traj = pendulum_run
    beam = AncfBeam3D(1.0, 7800.0, 2e11, RectangularSection(0.01, 0.01), 2)
    q0 = straight_beam_coordinates_3d([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 2)
    q = jnp.stack([q0, q0.at[27].add(-0.2), q0.at[27].add(-0.3)])  # drop the tip node's z
    spatial = eqx.tree_at(lambda tr: (tr.t, tr.q), traj, (jnp.array([0.0, 0.5, 1.0]), q))
    path = spatial.animate(fj.System([beam]), tmp_path / "beam.gif", fps=2)
    with Image.open(path) as im:
        assert im.n_frames == 3
    fn, style = animation.outline(beam)
    assert style == "beam"
    np.testing.assert_allclose(np.asarray(fn(q[0]))[[0, -1]], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], atol=1e-15)
    body = RigidBody2D(1.0, 0.1)
    fn, style = animation.outline(body, frame_size=0.5)
    assert style == "frame"
    np.testing.assert_allclose(fn(jnp.array([1.0, 2.0, np.pi / 2])), [[1.0, 2.5], [1.0, 2.0], [0.5, 2.0]], atol=1e-15)


def test_bad_arguments_raise(tmp_path, pendulum_run):
    system, traj = pendulum_run
    with pytest.raises(ValueError, match="path"):
        traj.animate(system, tmp_path / "x.avi")
    with pytest.raises(ValueError, match="fps"):
        traj.animate(system, tmp_path / "x.gif", fps=0)
    with pytest.raises(ValueError, match="nq"):
        traj.animate(models.double_pendulum(), tmp_path / "x.gif")
