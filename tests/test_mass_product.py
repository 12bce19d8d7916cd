"""`mass_product` (M(q) a without forming M) against the dense `mass_matrix(q) @ a`:
values, parameter gradients and vmap, for the meshed beams' element-wise products and the
default of the other bodies."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax.bodies import ModalHubBeam

BEAM2D = dict(length=1.2, rho=5540.0, area=0.0018, second_moment=1.215e-8, youngs=0.7e6)
SECTION = fj.RectangularSection(0.02, 0.01)


def _random(n, seed):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(n))


def _rel(x, ref):
    return float(jnp.max(jnp.abs(x - ref)) / jnp.max(jnp.abs(ref)))


def _agrees(body, q, a):
    dense, product = body.mass_matrix(q) @ a, body.mass_product(q, a)
    assert product.shape == dense.shape
    return _rel(product, dense)


def beam2d(n, strain="stretch"):
    p = BEAM2D
    return fj.AncfBeam2D(p["length"], p["rho"], p["area"], p["second_moment"], p["youngs"], n, strain=strain)


def beam3d(n, section=SECTION):
    return fj.AncfBeam3D(0.8, 7800.0, 2.1e11, section, n)


@pytest.fixture(scope="module")
def system():
    """A planar system of every kind of body: its product assembled body by body."""
    bodies = [
        fj.RigidBody2D(1.5, 0.02),
        beam2d(5),
        fj.RigidBar2D(0.7, 0.4),
        ModalHubBeam(0.002, 1.0, 0.0247, 6.5e5, 0.16, k=1.0, n_axial=1, n_transverse=3),
        fj.PointMass(0.3),
        beam2d(2, strain="green_lagrange"),
    ]
    return fj.System(bodies, [], [])


@pytest.mark.parametrize("n", [1, 2, 7, 64])
@pytest.mark.parametrize("strain", ["stretch", "green_lagrange"])
def test_ancf2d_matches_dense(n, strain):
    body = beam2d(n, strain)
    q = body.straight_coordinates(angle=0.3) + 0.01 * _random(body.ncoords, 0)
    assert _agrees(body, q, _random(body.ncoords, n)) < 1e-13


@pytest.mark.parametrize("n", [1, 3, 16])
@pytest.mark.parametrize("section", [SECTION, fj.CircularSection(0.006)], ids=["rectangle", "circle"])
def test_ancf3d_matches_dense(n, section):
    body = beam3d(n, section)
    q = body.straight_coordinates() + 0.01 * _random(body.ncoords, 0)
    assert _agrees(body, q, _random(body.ncoords, n)) < 1e-13


@pytest.mark.parametrize(
    "body",
    [
        fj.RigidBody2D(1.5, 0.02),
        fj.RigidBar2D(0.7, 0.4),
        fj.RigidBody3D(2.0, ((0.1, 0.01, 0.0), (0.01, 0.2, 0.0), (0.0, 0.0, 0.3))),
        fj.PointMass(0.3, dim=3),
        ModalHubBeam(0.002, 1.0, 0.0247, 6.5e5, 0.16, k=1.0, n_axial=1, n_transverse=3),
    ],
    ids=lambda b: type(b).__name__,
)
def test_other_bodies_match_dense(body):
    q = 0.3 * _random(body.ncoords, 1)  # the modal beam's mass depends on q
    assert _agrees(body, q, _random(body.ncoords, 2)) < 1e-13


def test_system_matches_dense(system):
    q, a = 0.1 * _random(system.nq, 3), _random(system.nq, 4)
    assert _rel(system.mass_product(q, a), system.mass(q) @ a) < 1e-13
    v = _random(system.nq, 5)
    assert float(system.kinetic_energy(q, v)) == pytest.approx(float(0.5 * v @ system.mass(q) @ v), rel=1e-13)


def test_system_refuses_a_product_of_the_wrong_length(system, user_facing_checks):
    q, a = 0.1 * _random(system.nq, 3), _random(system.nq, 4)
    with pytest.raises(ValueError, match="expected coordinates of shape"):
        system.mass_product(q, a[:-1])


def _weighted(body, q, a, w, how):
    """w . (M a), the product formed densely or element by element."""
    product = body.mass_matrix(q) @ a if how == "dense" else body.mass_product(q, a)
    return w @ product


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: beam2d(6), "rho"),
        (lambda: beam2d(6), "length"),
        (lambda: beam2d(6), "area"),
        (lambda: beam3d(3), "rho"),
        (lambda: beam3d(3), "length"),
    ],
)
def test_parameter_gradient_matches_dense(make, name):
    body = make()
    q, a, w = _random(body.ncoords, 6), _random(body.ncoords, 7), _random(body.ncoords, 8)

    def f(x, how):
        return _weighted(eqx.tree_at(lambda b: getattr(b, name), body, x), q, a, w, how)

    x0 = getattr(body, name)
    g_dense, g = jax.grad(f)(x0, "dense"), jax.jit(jax.grad(f), static_argnums=1)(x0, "element")
    assert float(g) == pytest.approx(float(g_dense), rel=1e-12)


@pytest.mark.parametrize("make", [lambda: beam2d(5), lambda: beam3d(2)], ids=["2d", "3d"])
def test_vmap_over_rho_and_vectors_matches_loop(make):
    body = make()
    q = _random(body.ncoords, 9)
    rhos = body.rho * jnp.array([0.5, 1.0, 2.0])
    A = jnp.stack([_random(body.ncoords, 10 + k) for k in range(3)])
    product = lambda rho, a: eqx.tree_at(lambda b: b.rho, body, rho).mass_product(q, a)
    batched = jax.vmap(product)(rhos, A)
    loop = jnp.stack([product(r, a) for r, a in zip(rhos, A, strict=True)])
    assert _rel(batched, loop) < 1e-14
    shared = jax.vmap(product, (0, None))(rhos, A[0])  # one vector, batched parameters
    assert _rel(shared, jnp.stack([product(r, A[0]) for r in rhos])) < 1e-14
