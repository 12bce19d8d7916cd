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
from flexjax.system import DENSE_MASS_MAX

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


CONSTANT_MASS_BODIES = [
    fj.RigidBody2D(1.5, 0.02),
    fj.RigidBar2D(0.7, 0.4),
    fj.RigidBody3D(2.0, ((0.1, 0.01, 0.0), (0.01, 0.2, 0.0), (0.0, 0.0, 0.3))),
    fj.PointMass(0.3, dim=3),
    beam2d(3),
    beam3d(2),
]


@pytest.mark.parametrize("body", CONSTANT_MASS_BODIES, ids=lambda b: type(b).__name__)
def test_bodies_marked_constant_mass_have_a_mass_matrix_independent_of_q(body):
    assert body.constant_mass
    np.testing.assert_array_equal(
        body.mass_matrix(_random(body.ncoords, 11)), body.mass_matrix(jnp.zeros(body.ncoords))
    )


def test_modal_beam_is_not_marked_constant_mass():
    body = ModalHubBeam(0.002, 1.0, 0.0247, 6.5e5, 0.16, k=1.0, n_axial=1, n_transverse=3)
    assert not body.constant_mass
    assert _rel(body.mass_matrix(0.3 * _random(body.ncoords, 12)), body.mass_matrix(jnp.zeros(body.ncoords))) > 1e-3


def test_dense_mass_equals_the_body_by_body_product(system):
    """`System._with_dense_mass` (M formed once, one dense product) against the plain
    path; it applies only when every body's mass is constant and nq is small."""
    constant = fj.System([b for b in system.bodies if b.constant_mass], [], [])
    dense = constant._with_dense_mass()
    assert dense.dense_mass is not None and constant.dense_mass is None
    q, a = 0.1 * _random(constant.nq, 3), _random(constant.nq, 4)
    assert _rel(dense.mass_product(q, a), constant.mass_product(q, a)) < 1e-14
    np.testing.assert_array_equal(dense.mass(q), constant.mass(q))
    # a modal beam's mass depends on q; a long beam is cheaper body by body
    assert system._with_dense_mass() is system
    long = fj.System([beam2d(16)], [], [])
    assert long.nq > DENSE_MASS_MAX and long._with_dense_mass() is long


def _slider_x(slider_mass, run=None):
    from flexjax.models.flexible_slider_crank import flexible_slider_crank, flexible_slider_crank_state

    system = flexible_slider_crank(n_elements=2, slider_mass=slider_mass)
    q0, v0 = flexible_slider_crank_state(system)
    return fj.simulate(system, q0, v0, 0.005, 1e-4, save_every=50).q[-1, -2]


def test_single_runs_use_the_dense_mass_batches_the_body_products():
    """A single slider-crank run takes the dense product, a batch of one the per-body
    products: the same trajectory to the Newton tolerance; the gradient with respect
    to the slider's mass (which enters only through the formed matrix) matches a
    central difference."""
    from flexjax.solvers.simulate import _batched

    seen = []
    jax.vmap(lambda m: seen.append(_batched(m)) or m)(jnp.ones(2))
    jax.grad(lambda m: seen.append(_batched(m)) or m)(1.0)
    jax.vmap(jax.grad(lambda m: seen.append(_batched(m)) or m))(jnp.ones(2))
    assert seen == [True, False, True]
    single = jax.jit(_slider_x)(0.5)
    batch = jax.vmap(_slider_x)(jnp.array([0.5]))[0]
    assert float(single) == pytest.approx(float(batch), abs=1e-12)
    g = jax.jit(jax.grad(_slider_x))(0.5)
    f = jax.jit(_slider_x)
    fd = (f(0.5 + 1e-4) - f(0.5 - 1e-4)) / 2e-4
    assert float(g) == pytest.approx(float(fd), rel=1e-5)
    assert abs(float(g)) > 1e-6  # the slider's mass does change the run
