"""The body interface: every body maps its own coordinates `q_b` to mass, forces,
internal constraints and the positions of its material points."""

import abc
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Scalar


class ElementChain(NamedTuple):
    r"""Element-local coupling of a body's coordinates (a meshed beam): element $e$ owns the
    window `q_b[stride*e : stride*e + width]`, and node $k$ owns `q_b[stride*k : stride*(k+1)]`
    (neighbouring elements share nodes when `width > stride`).

    Declaring it promises that every map of the body (mass matrix, force, internal
    constraints, `position`, `axes`, `center_of_mass` and the node maps) depends, in each
    of its entries and second derivatives, on the coordinates of one element only, so
    that its Jacobians are banded; `flexjax.solvers._structure` builds the sparsity of
    the Newton matrix from it.
    """

    stride: int
    width: int


class AbstractBody(eqx.Module):
    r"""A body that owns `ncoords` generalized coordinates $q_b$.

    A body sees only its own slice of the system coordinates, never the system.

    - `ncoords`: number of coordinates (static).
    - `dim`: 2 for planar bodies, 3 for spatial ones (static).
    - `nconstraints`: number of internal constraints $\Phi_b(q_b) = 0$ (rigidity
      conditions of natural coordinates; 0 for most bodies).
    - `point_size`: length of a body-frame point (the `point` of `position`), checked
      against joint and force attachment points when a `System` is assembled; `None`
      where any length is accepted.
    - `coupling`: `None` (the default, always safe): any coordinate of the body may be
      coupled with any other; an `ElementChain` for meshed bodies whose maps couple the
      coordinates of one element at a time (static; read by
      `flexjax.solvers._structure` to build a banded Newton matrix).
    - `constant_mass`: `False` (the default, always safe); `True` where `mass_matrix`
      does not depend on `q`, so that a single `simulate` run of a small model may form
      it once and use one dense product (static; `tests/test_mass_product.py` checks
      the flag of every built-in body at a random `q`).
    """

    ncoords: eqx.AbstractClassVar[int]
    dim: eqx.AbstractClassVar[int]
    nconstraints: eqx.AbstractClassVar[int]
    point_size: ClassVar[int | None] = None
    # natural coordinates, ANCF: see `System._with_dense_mass`
    constant_mass: ClassVar[bool] = False
    coupling: ClassVar[ElementChain | None] = None

    @abc.abstractmethod
    def mass_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        r"""Mass matrix $M_b(q_b)$; symmetric positive definite."""

    # A default that meshed bodies replace by a cheaper product of the same value (the
    # fast path of STYLE.md section 11, kept behind this one public method; tests compare
    # every override with this default)
    def mass_product(self, q: Float[Array, " n"], a: Float[Array, " n"]) -> Float[Array, " n"]:
        r"""The product $M_b(q_b)\,a$ of the mass matrix with a vector.

        The default forms `mass_matrix(q) @ a` (correct for every body); meshed beams
        (`AncfBeam2D`, `AncfBeam3D`) compute it element by element, at a cost linear in
        the number of elements.
        """
        return self.mass_matrix(q) @ a

    @abc.abstractmethod
    def force(self, q: Float[Array, " n"], v: Float[Array, " n"], t: Scalar) -> Float[Array, " n"]:
        """Internal generalized force (elastic, quadratic-velocity), right-hand side sign."""

    @abc.abstractmethod
    def constraints(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        r"""Internal constraints $\Phi_b(q_b)$, shape `(nconstraints,)`."""

    @abc.abstractmethod
    def position(self, q: Float[Array, " n"], point: Float[Array, " d"]) -> Float[Array, " d"]:
        """World position of the material point with body-frame coordinates `point`."""

    @abc.abstractmethod
    def axes(self, q: Float[Array, " n"]) -> Float[Array, "d d"]:
        """Body axes as matrix columns (the rotation matrix when constraints hold)."""

    @abc.abstractmethod
    def total_mass(self) -> Scalar:
        """Total mass of the body."""

    @abc.abstractmethod
    def center_of_mass(self, q: Float[Array, " n"]) -> Float[Array, " d"]:
        """World position of the centre of mass."""

    @abc.abstractmethod
    def potential_energy(self, q: Float[Array, " n"]) -> Scalar:
        """Internal (elastic) potential energy; 0 for rigid bodies."""


def planar_angle(axes: Float[Array, "2 2"]) -> Scalar:
    r"""Orientation angle of planar body axes, $\theta = \operatorname{atan2}(a_{21}, a_{11})$."""
    return jnp.arctan2(axes[1, 0], axes[0, 0])
