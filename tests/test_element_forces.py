"""Element-stiffness derivative of the ANCF elastic forces (`chain_elastic_force`):
forward and reverse derivatives with respect to the coordinates equal the Hessian of
the total elastic energy, and those with respect to a material parameter equal a
central difference, for the planar and the spatial beam."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj


def beams():
    yield fj.AncfBeam2D(1.0, 7850.0, 1e-4, 1e-9, 2e9, 3, axial_order=5, bending_order=3)
    yield fj.AncfBeam2D(1.0, 7850.0, 1e-4, 1e-9, 2e9, 2, strain="green_lagrange")
    yield fj.AncfBeam3D(0.5, 4430.0, 1e9, fj.RectangularSection(0.01, 0.008), 2, poisson=0.3, integration="selective")


@pytest.mark.parametrize("beam", list(beams()), ids=["planar", "planar-green-lagrange", "spatial"])
def test_force_derivatives_equal_energy_hessian_and_finite_differences(beam):
    rng = np.random.default_rng(1)
    q = beam.straight_coordinates() + 0.02 * jnp.asarray(rng.normal(size=beam.ncoords))
    force = lambda b, q: b.force(q, jnp.zeros_like(q), 0.0)
    K_ref = -jax.jit(jax.hessian(beam.potential_energy))(q)  # independent: second derivative of U
    scale = float(jnp.max(jnp.abs(K_ref)))
    np.testing.assert_allclose(jax.jit(jax.jacfwd(force, 1))(beam, q), K_ref, atol=1e-12 * scale)
    np.testing.assert_allclose(jax.jit(jax.jacrev(force, 1))(beam, q), K_ref, atol=1e-12 * scale)
    # Young's modulus: forward, reverse and a central difference (the force is linear in E)
    with_e = jax.jit(lambda e: force(eqx.tree_at(lambda b: b.youngs, beam, e), q))
    e0 = beam.youngs
    fd = (with_e(1.001 * e0) - with_e(0.999 * e0)) / (0.002 * e0)
    f_scale = float(jnp.max(jnp.abs(fd)))
    assert f_scale > 0
    np.testing.assert_allclose(jax.jit(jax.jacfwd(with_e))(e0), fd, atol=1e-9 * f_scale)
    np.testing.assert_allclose(jax.jit(jax.jacrev(with_e))(e0), fd, atol=1e-9 * f_scale)
