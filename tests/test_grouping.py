"""Identical bodies and joints are evaluated through one `vmap` (`flexjax._grouping`):
the system's maps equal the part-by-part definitions, gradients with respect to one
part's parameter are exact, parts that differ in structure are kept apart, and the
traced program no longer grows with the number of equal parts."""

import equinox as eqx
import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax._grouping import gather_rows, groups, signature
from flexjax.joints import AncfRevolute


def chain(n_links, youngs=(2e7, 3e7, 5e7), lengths=(0.4, 0.5, 0.3)):
    """Planar ANCF links of equal structure and different E and length, pinned end to
    end, the first to the ground, plus two rigid bars hanging from the last link's tip."""
    links = [
        fj.AncfBeam2D(lengths[i % 3], 1200.0, 1e-4, 1e-9, youngs[i % 3], 2, strain="stretch") for i in range(n_links)
    ]
    bars = [fj.RigidBar2D(0.2 + 0.1 * k, 0.3) for k in range(2)]
    joints = [fj.AncfPin(0, 0)] + [AncfRevolute(i, -1, i + 1, 0) for i in range(n_links - 1)]
    joints += [fj.AncfPin(n_links - 1, -1, n_links + k, (0.0, 0.0)) for k in range(2)]
    return fj.System(links + bars, joints, [fj.Gravity((0.0, -9.81))])


def part_by_part(system, q, v, t):
    """The maps evaluated body by body and joint by joint, as written in `System`'s
    definition (the reference)."""
    parts = [q[system.body_slice(i)] for i in range(len(system.bodies))]
    vels = [v[system.body_slice(i)] for i in range(len(system.bodies))]
    rows = [b.constraints(p) for b, p in zip(system.bodies, parts, strict=True)]
    for j in system.joints:
        bj = None if j.body_j is None else system.bodies[j.body_j]
        qj = jnp.zeros(0) if j.body_j is None else parts[j.body_j]
        rows.append(j.constraint(system.bodies[j.body_i], parts[j.body_i], bj, qj, t))
    each = list(zip(system.bodies, parts, vels, strict=True))
    return dict(
        constraints=jnp.concatenate([jnp.reshape(r, -1) for r in rows]),
        mass_product=jnp.concatenate([b.mass_product(p, w) for b, p, w in each]),
        body_forces=jnp.concatenate([b.force(p, w, t) for b, p, w in each]),
        mass=jax.scipy.linalg.block_diag(*[b.mass_matrix(p) for b, p, _ in each]),
        potential=sum(b.potential_energy(p) for b, p, _ in each),
        element_forces=sum(  # each force element's `force` on all its bodies at once
            jnp.pad(Qi, (system.offsets[i], system.nq - system.offsets[i + 1]))
            for f, idx in zip(system.force_elements, system.force_bodies, strict=True)
            for i, Qi in zip(
                idx,
                f.force([system.bodies[i] for i in idx], [parts[i] for i in idx], [vels[i] for i in idx], t),
                strict=True,
            )
        ),
        element_potential=sum(
            f.potential_energy([system.bodies[i] for i in idx], [parts[i] for i in idx], t)
            for f, idx in zip(system.force_elements, system.force_bodies, strict=True)
        ),
    )


@pytest.fixture(scope="module")
def state():
    system = chain(3)
    key = jax.random.PRNGKey(0)
    q = jax.random.normal(key, (system.nq,))
    v = jax.random.normal(jax.random.PRNGKey(1), (system.nq,))
    return system, q, v


def test_equal_parts_are_grouped_and_others_kept_apart(state):
    system, _, _ = state
    assert groups(signature(b) for b in system.bodies) == [(0, 1, 2), (3, 4)]
    other = fj.AncfBeam2D(0.4, 1200.0, 1e-4, 1e-9, 2e7, 3, strain="stretch")  # 3 elements: another structure
    assert signature(other) != signature(system.bodies[0])
    assert signature(system.joints[1], skip=("body_i", "body_j")) == signature(system.joints[2], ("body_i", "body_j"))
    assert signature(system.joints[0], ("body_i", "body_j")) != signature(system.joints[1], ("body_i", "body_j"))


def test_grouped_maps_equal_the_part_by_part_definitions(state):
    system, q, v = state
    ref = part_by_part(system, q, v, 0.3)
    for name, value in (
        ("constraints", system.constraints(q, 0.3)),
        ("mass_product", system.mass_product(q, v)),
        ("body_forces", system.body_forces(q, v, 0.3)),
        ("mass", system.mass(q)),
    ):
        np.testing.assert_allclose(value, ref[name], rtol=1e-13, atol=1e-13 * float(jnp.max(jnp.abs(ref[name]))))
    elastic = fj.System(system.bodies, system.joints).potential_energy(q, 0.3)  # bodies only, no gravity
    np.testing.assert_allclose(elastic, ref["potential"], rtol=1e-13)
    # gravity acts on each body alike (`per_body`): equal bodies through one vmap, also
    # on a subset of the bodies named out of order
    for s in (system, fj.System(system.bodies, system.joints, [fj.Gravity((0.3, -9.81), bodies=(4, 0, 2))])):
        ref = part_by_part(s, q, v, 0.3)
        np.testing.assert_allclose(s.element_forces(q, v, 0.3), ref["element_forces"], rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(s.potential_energy(q, 0.3), elastic + ref["element_potential"], rtol=1e-13)


def test_gradient_with_respect_to_one_grouped_part_is_exact(state):
    system, q, v = state

    def force_norm(E, s=system):
        s = eqx.tree_at(lambda s: s.bodies[1].youngs, s, E)
        return jnp.sum(s.body_forces(q, v, 0.0) ** 2)

    def reference(E):
        s = eqx.tree_at(lambda s: s.bodies[1].youngs, system, E)
        return jnp.sum(part_by_part(s, q, v, 0.0)["body_forces"] ** 2)

    E = system.bodies[1].youngs
    assert float(jax.grad(force_norm)(E)) == pytest.approx(float(jax.grad(reference)(E)), rel=1e-12)
    # and the samples of a vmap over that parameter are the single evaluations
    Es = E * jnp.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(jax.vmap(force_norm)(Es), [reference(e) for e in Es], rtol=1e-12)


def equations(jaxpr) -> int:
    """Equations of a jaxpr, those of its inner jaxprs (custom rules, loops) included."""
    return sum(1 + sum(equations(j) for j in jax.extend.core.jaxprs_in_params(e.params)) for e in jaxpr.eqns)


def test_traced_program_does_not_grow_with_the_number_of_equal_links():
    def size(n):
        system = chain(n)
        q = jnp.zeros(system.nq)
        return equations(jax.make_jaxpr(lambda q: (system.constraints(q, 0.0), system.forces(q, q, 0.0)))(q).jaxpr)

    # one copy per link (and per joint) would make 9 links about 2.8 times the program of 3
    assert size(9) < 1.3 * size(3)


@pytest.mark.parametrize(
    "index",
    [
        np.arange(12).reshape(3, 4),  # consecutive equal parts
        2 + 5 * np.arange(3)[:, None] + np.arange(4),  # equal stride, gaps between rows
        10 + 4 * np.arange(2)[:, None] + np.arange(4),  # the last row ends at the end
        np.array([[3, 4, 5]]),  # one row
        np.array([[6, 7, 8]] * 3),  # the same row three times
        np.array([[0, 1], [4, 5], [6, 7], [6, 7]]),  # stretches of strides 4 and 0, joined
        np.array([[0, 1], [4, 5], [6, 7], [6, 7], [10, 11]]),  # three stretches: a gather
        np.array([[2, 3], [0, 1]]),  # descending: a gather
        np.array([[0, 1, 2, 3], [2, 3, 4, 5]]),  # overlapping rows: a gather
    ],
)
def test_gather_rows_equals_indexing_with_its_derivatives(index):
    x = jnp.sin(jnp.arange(18.0))
    ct = jnp.cos(jnp.arange(index.size, dtype=float)).reshape(index.shape)
    np.testing.assert_array_equal(gather_rows(x, index), x[index])
    # the transpose: each entry of x collects the cotangents of the rows that read it
    expected = np.zeros(18)
    np.add.at(expected, index, np.asarray(ct))
    (got,) = jax.vjp(lambda y: gather_rows(y, index), x)[1](ct)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_residual_and_newton_matrix_of_a_chain_have_no_scatter():
    """Equal links stored one after another are read by slices, and force elements are
    added by pads: the residual's transposed constraint rows and its Jacobian then hold
    no gather or scatter (each a kernel, or with XLA's older emitter a loop, of its own)."""
    system = chain(4)
    q, lam = jnp.zeros(system.nq), jnp.zeros(system.nconstraints)

    def residual(q):
        _, vjp = jax.vjp(lambda q: system.constraints(q, 0.0), q)
        return system.forces(q, q, 0.0) - vjp(lam)[0]

    def primitives(jaxpr):
        for e in jaxpr.eqns:
            yield e.primitive.name
            for sub in jax.extend.core.jaxprs_in_params(e.params):
                yield from primitives(sub)

    names = set(primitives(jax.make_jaxpr(jax.jacfwd(residual))(q).jaxpr))
    assert "dot_general" in names  # the walk sees the program
    assert not {n for n in names if "scatter" in n or n == "gather"}
