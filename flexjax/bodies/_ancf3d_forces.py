r"""Elastic force of the spatial ANCF beam (`AncfBeam3D.force`) from its element energy
(`AncfBeam3D._element_energy`), with the element-stiffness derivative of
`chain_elastic_force` (24 x 24 autodiff Hessians of the element energy)."""

import jax.numpy as jnp

from ._element_forces import chain_elastic_force


def elastic_force(beam, q):
    r"""Elastic force $-\partial U/\partial q$ of `beam`."""
    return chain_elastic_force(element_energy, beam, q, beam.n_elements, 12, 24)


def element_energy(beam, q_e):
    """Elastic energy of one element from its 24 coordinates (`chain_elastic_force`)."""
    return beam._element_energy(jnp.reshape(q_e, (8, 3)))
