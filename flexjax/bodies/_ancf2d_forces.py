r"""Elastic force kernels of the planar ANCF beam (`AncfBeam2D.force`).

The beam's physics is its element energy (`AncfBeam2D._element_energy`). Here that
energy is turned into forces fast: the force values in a column layout with a
`custom_vmap` rule (`column_force`), and their derivative from element Hessians formed
from the Gauss-point energy densities (`element_stiffness`), both behind
`chain_elastic_force`. `tests/test_element_forces.py` checks them against the autodiff
gradient and Hessian of `potential_energy`.
"""

import jax
import jax.numpy as jnp

from ._element_forces import chain_elastic_force


def elastic_force(beam, q):
    r"""Elastic force $-\partial U/\partial q$ of `beam`: its values in the column layout of
    `column_force`, with 8 x 8 element stiffness matrices as its derivative."""
    return chain_elastic_force(element_energy, beam, q, beam.n_elements, 4, 8, element_stiffness, primal=primal_force)


def element_energy(beam, q_e):
    """Elastic energy of one element from its 8 coordinates (`chain_elastic_force`)."""
    return beam._element_energy(jnp.reshape(q_e, (4, 2)))


def _point_maps(beam):
    """The Gauss-point maps of `AncfBeam2D._quadrature` acting on an element's 8
    coordinates (node-major, component-minor): axial `Ba` (Ga, 2, 8) gives $r'$, bending
    `Bb` (Gb, 4, 8) gives $[r', r'']$."""
    Sa, wa, Sb, wb = beam._quadrature()
    kron = lambda S: jnp.einsum("gan,cd->gacnd", S, jnp.eye(2)).reshape(S.shape[0], 2 * S.shape[1], 8)
    return kron(Sa), wa, kron(Sb), wb


def element_stiffness(beam, q_e):
    r"""Hessians of the element energies, (n, 8, 8), from the element coordinates `q_e`
    (n, 8) (`chain_elastic_force`).

    The energy is a weighted sum of point densities $\psi_g(u_g)$ of inputs
    $u_g = B_g q_e$ that are linear in the coordinates, so
    $K_e = \sum_g w_g B_g^T \nabla^2\psi_g B_g$: autodiff Hessians of the 2- and
    4-input densities instead of the 8-input element energy (cheaper; timings in
    `docs/performance.md`).
    """
    Ba, wa, Bb, wb = _point_maps(beam)

    def points(B, w, density):
        flat_density = lambda u: density(*u)  # u: [r'_x, r'_y(, r''_x, r''_y)]
        H = jax.vmap(jax.vmap(jax.hessian(flat_density)))(jnp.einsum("gkm,em->egk", B, q_e))
        return jnp.einsum("gkm,egkl,g,gln->emn", B, H, w, B)

    return points(Ba, wa, beam._axial_density) + points(Bb, wb, beam._bending_density)


def column_force(beam, Q):
    r"""Elastic forces $-\partial U/\partial q$ of the columns of `Q` (nq, B): B
    configurations at once, the beam's parameters scalars or (1, 1, B) arrays (one value
    per column; `length` a scalar).

    The Gauss-point values $u = [r'_a;\ r'_b;\ r''_b]$ of every element and column are
    rows of a (points · 2, elements · B) array, elements and columns along the
    contiguous axis: one matrix product from the element coordinates, the densities'
    autodiff gradients elementwise over whole rows of each point group (no padded
    pieces, so XLA vectorizes them), one product back, and the node assembly. The
    batch is the contiguous axis under `vmap` (`primal_force`), the elements for one
    beam."""
    n, B = beam.n_elements, Q.shape[-1]
    S, wa, wb = beam._point_rows()
    ga, gb = wa.shape[0], wb.shape[0]
    nodes = jnp.reshape(Q, (n + 1, 4, B))
    W = jnp.concatenate([nodes[:-1], nodes[1:]], axis=1)  # (n, 8, B): element coordinates, component-minor
    W = jnp.reshape(jnp.moveaxis(W, 1, 0), (8, n * B))
    U = jnp.reshape(jnp.kron(S, jnp.eye(2, dtype=S.dtype)) @ W, (-1, 2, n, B))  # (point, component, n, B)
    (rx, ry), (bx, by), (px, py) = (
        (U[rows, 0], U[rows, 1]) for rows in (slice(0, ga), slice(ga, ga + gb), slice(ga + gb, None))
    )
    axial = lambda rx, ry: jnp.sum(wa[:, None, None] * beam._axial_density(rx, ry))
    bending = lambda bx, by, px, py: jnp.sum(wb[:, None, None] * beam._bending_density(bx, by, px, py))
    grad_a = jax.grad(axial, (0, 1))(rx, ry)
    grad_b = jax.grad(bending, (0, 1, 2, 3))(bx, by, px, py)
    G = jnp.concatenate([jnp.stack(grad_a, 1), jnp.stack(grad_b[:2], 1), jnp.stack(grad_b[2:], 1)])
    F = jnp.kron(S.T, jnp.eye(2, dtype=S.dtype)) @ jnp.reshape(G, (-1, n * B))  # (8, n B): dU/d(element coordinates)
    F = jnp.moveaxis(jnp.reshape(F, (8, n, B)), 0, 1)
    nodal = jnp.pad(F[:, :4], ((0, 1), (0, 0), (0, 0))) + jnp.pad(F[:, 4:], ((1, 0), (0, 0), (0, 0)))
    return -jnp.reshape(nodal, (4 * (n + 1), B))


def _one_force(beam, q):
    """The elastic force of one configuration: `column_force` of one column, the
    elements along the contiguous axis."""
    return column_force(beam, q[:, None])[:, 0]


@jax.custom_batching.custom_vmap
def primal_force(beam, q):
    """`_one_force`; under `vmap`, `column_force` of all samples as columns."""
    return _one_force(beam, q)


@primal_force.def_vmap
def _primal_force_vmap(axis_size, in_batched, beam, q):
    beam_batched, q_batched = in_batched
    if beam_batched.length:  # the point maps depend on the element length: one beam per sample
        axes = jax.tree_util.tree_map(lambda b: 0 if b else None, beam_batched)
        return jax.vmap(_one_force, (axes, 0 if q_batched else None))(beam, q), True
    Q = jnp.moveaxis(q, 0, -1) if q_batched else jnp.broadcast_to(q[:, None], (q.shape[0], axis_size))
    # per-sample parameters along the last axis of the (point, element, sample) arrays
    beam = jax.tree_util.tree_map(lambda x, b: jnp.reshape(x, (1, 1, axis_size)) if b else x, beam, beam_batched)
    return jnp.moveaxis(column_force(beam, Q), -1, 0), True
