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


def test_planar_force_columns_equal_the_energy_gradient_single_and_batched():
    """The planar beam computes its force values in the column layout of
    `ancf2d._column_force` (elements, and under `vmap` the samples, along the contiguous
    axis). They equal -dU/dq of `potential_energy` (per element, by `jax.vmap` of the
    element energy) for one beam and for batches over Young's modulus with the
    coordinates, the coordinates alone, Young's modulus alone, and the length (whose
    point maps differ per sample: one beam per sample)."""
    beam = fj.AncfBeam2D(1.0, 7850.0, 1e-4, 1e-9, 2e9, 3, axial_order=5, bending_order=3)
    rng = np.random.default_rng(2)
    qs = beam.straight_coordinates()[None] + 0.02 * jnp.asarray(rng.normal(size=(5, beam.ncoords)))
    es, lengths = 2e9 * jnp.linspace(0.8, 1.2, 5), jnp.linspace(0.95, 1.05, 5)

    def with_params(e, length):
        return eqx.tree_at(lambda b: (b.youngs, b.length), beam, (e, length))

    force = lambda e, length, q: with_params(e, length).force(q, jnp.zeros_like(q), 0.0)
    reference = jax.jit(lambda e, length, q: -jax.grad(with_params(e, length).potential_energy)(q))
    one = beam.length
    cases = {  # in_axes of (E, length, q) -> the samples' arguments
        "E and q": ((0, None, 0), lambda i: (es[i], one, qs[i])),
        "q": ((None, None, 0), lambda i: (beam.youngs, one, qs[i])),
        "E": ((0, None, None), lambda i: (es[i], one, qs[0])),
        "length and q": ((None, 0, 0), lambda i: (beam.youngs, lengths[i], qs[i])),
    }
    for name, (axes, args) in cases.items():
        batched_args = [a if ax is None else b for a, ax, b in zip(args(0), axes, (es, lengths, qs), strict=True)]
        got = jax.jit(jax.vmap(force, axes))(*batched_args)
        want = jnp.stack([reference(*args(i)) for i in range(5)])
        scale = float(jnp.max(jnp.abs(want)))
        np.testing.assert_allclose(got, want, atol=1e-12 * scale, err_msg=name)
    single = jax.jit(force)(beam.youngs, one, qs[1])
    np.testing.assert_allclose(single, reference(beam.youngs, one, qs[1]), atol=1e-12 * float(jnp.max(jnp.abs(single))))
