r"""Planar ANCF cable/beam: gradient-deficient two-node elements (seed 002, eq. 15-20).

One `AncfBeam2D` body owns a whole straight-in-reference beam of `n_elements` equal
elements. Node $k$ (at arc length $s_k = k\,l_e$, $l_e = L/n$) carries its position and
slope, $[r_k, r_k']$ with $r' = \partial r/\partial s$, so the body has $4(n+1)$
coordinates and element $e$ uses nodes $e, e+1$:
$e_e = [r_e, r_e', r_{e+1}, r_{e+1}']$ (eq. 17). Inside an element, with
$\xi = x/l_e \in [0, 1]$, $r(\xi) = S(\xi)\,e_e$ with the cubic Hermite functions of
eq. 16: $S = [N_1 I_2,\ l_e N_2 I_2,\ N_3 I_2,\ l_e N_4 I_2]$,
$N_1 = 1 - 3\xi^2 + 2\xi^3$, $N_2 = \xi - 2\xi^2 + \xi^3$, $N_3 = 3\xi^2 - 2\xi^3$,
$N_4 = \xi^3 - \xi^2$.

**Mass.** Constant, $M = \int_0^L \rho A\,S^T S\,dx$, assembled once (the ½ of seed
eq. 19 belongs to the kinetic energy $T = \tfrac12 \dot q^T M \dot q$, not to $M$). Every
point is linear in $q$, so gravity $V = -m\,g\cdot r_c(q)$ is exact.

**Elastic energy.** $U = \tfrac12\int_0^L (EA\,\varepsilon^2 + EI\,\kappa^2)\,dx$ with
one of two measures (static `strain`):

- `"stretch"` (default): $\varepsilon = |r'| - 1$, $\kappa = (r' \times r'')/|r'|^2$
  ($\kappa = d\theta/ds$, the rate of the tangent angle: with it the continuum model is
  the extensible elastica, $N = EA\,\varepsilon$, $M = EI\,\kappa$);
- `"green_lagrange"`: $\varepsilon = \tfrac12(r'^T r' - 1)$, $\kappa = (r' \times r'')/|r'|^3$.

Both agree to first order in the strain; at large axial strain they differ.
$U$ is integrated by Gauss-Legendre quadrature per element, with separate orders for the
axial and bending terms (reduced axial integration is the usual remedy for membrane
locking). Defaults `axial_order=3`, `bending_order=3`: see `docs/ancf2d.md` for the
measured effect of the orders on the elastica. Elastic forces are $Q = -\partial U/\partial q$
by `jax.grad`, their derivative the assembled element Hessians
(`flexjax.bodies._element_forces`), formed from the autodiff Hessians of the Gauss-point
energy densities (the kernels of `flexjax.bodies._ancf2d_forces`).

Material points are addressed by their arc length in the undeformed beam:
`position(q, jnp.array([s]))`, $0 \le s \le L$.
"""

import functools
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_positive, check_shape
from .._custom_types import Scalar, ScalarLike
from ._ancf2d_forces import elastic_force
from ._ancf_core import (
    chain_mass_product,
    check_n_elements,
    check_order,
    check_segment,
    element_at,
    elements,
    gauss,
    hermite,
    locate,
    node_index,
    straight_nodes,
)
from .base import AbstractBody, ElementChain

_STRAINS = ("stretch", "green_lagrange")
_R90 = np.array([[0.0, -1.0], [1.0, 0.0]])


@functools.cache
def _unit_element_mass() -> np.ndarray:
    r"""$\hat m = \int_0^1 N^T N\,d\xi$ (4 × 4) of the Hermite functions, unit slope scaling.

    Exact: the integrand is a degree-6 polynomial and 4 Gauss points integrate degree 7.
    """
    xi, w = gauss(4)
    N = hermite(xi)[0]  # (4 points, 4 functions)
    return np.einsum("g,gi,gj->ij", w, N, N)


@functools.cache
def _unit_mass_matrix(n: int) -> np.ndarray:
    r"""Assembled $\int_0^1 \tilde S^T \tilde S\,d\xi$ per element with unit slope scaling
    (`_unit_element_mass` on both components).

    The physical matrix is $\rho A l_e\, D \hat M D$ with $D = \mathrm{diag}(1, 1, l_e, l_e, \dots)$.
    """
    me = np.kron(_unit_element_mass(), np.eye(2))
    nq = 4 * (n + 1)
    M = np.zeros((nq, nq))
    for e in range(n):
        M[4 * e : 4 * e + 8, 4 * e : 4 * e + 8] += me
    return M


def straight_beam_coordinates(start, end, n_elements: int) -> Float[Array, " nq"]:
    r"""Coordinates of a straight, unstrained beam from `start` to `end` (2-vectors, m).

    Node $k$ sits at $r_k = r_0 + \tfrac{k}{n}(r_n - r_0)$ with the unit slope
    $r_k' = (r_n - r_0)/|r_n - r_0|$. The distance must equal the beam length for the
    configuration to be strain-free.

    **Returns:** `q_b`, shape `(4 (n_elements + 1),)`.
    """
    start, d, length = check_segment("straight_beam_coordinates", start, end, n_elements, 2)
    return straight_nodes(start, d, (d / length)[None], n_elements)


@functools.partial(jax.jit, static_argnames="n_elements")  # one small program, not an op per line
def _straight_along(start, angle, length, n_elements: int):
    """`straight_beam_coordinates` from `start` over `length` along `angle` (rad)."""
    t = jnp.stack([jnp.cos(angle), jnp.sin(angle)])
    return straight_nodes(start, length * t, t[None], n_elements)


class AncfBeam2D(AbstractBody):
    r"""A planar ANCF cable/beam of `n_elements` gradient-deficient elements (one body).

    See the module docstring for the formulation. Coordinates: node $k$ owns
    `q_b[4k:4k+4]` $= [r_k, r_k']$.
    """

    length: Float[Array, ""]
    rho: Float[Array, ""]
    area: Float[Array, ""]
    second_moment: Float[Array, ""]
    youngs: Float[Array, ""]
    n_elements: int = eqx.field(static=True)
    strain: str = eqx.field(static=True)
    axial_order: int = eqx.field(static=True)
    bending_order: int = eqx.field(static=True)
    ncoords: int = eqx.field(static=True)
    dim: ClassVar[int] = 2
    point_size: ClassVar[int] = 1
    nconstraints: ClassVar[int] = 0
    # element e couples nodes e and e+1, q_b[4e:4e+8]: mass, elastic force, points (linear
    # in q) and `axes` (node 0) respect it
    coupling: ClassVar[ElementChain] = ElementChain(stride=4, width=8)
    constant_mass: ClassVar[bool] = True

    def __init__(
        self,
        length,
        rho,
        area,
        second_moment,
        youngs,
        n_elements: int = 4,
        *,
        strain: str = "stretch",
        axial_order: int = 3,
        bending_order: int = 3,
    ):
        """**Arguments:**

        - `length`: undeformed length $L$ (m).
        - `rho`: density $\\rho$ (kg/m³).
        - `area`: cross-section area $A$ (m²).
        - `second_moment`: second moment of area $I$ (m⁴).
        - `youngs`: Young's modulus $E$ (Pa).
        - `n_elements`: number of equal elements (static, >= 1).
        - `strain`: `"stretch"` (default) or `"green_lagrange"` (static).
        - `axial_order`, `bending_order`: Gauss points per element for the axial and the
          bending energy (static, default 3 and 3).

        All physical parameters are positive scalars and pytree leaves (differentiable,
        batchable); `length` also sets the element length and the material coordinate.
        """
        check_n_elements("AncfBeam2D", n_elements)
        if strain not in _STRAINS:
            raise ValueError(f"AncfBeam2D: `strain` must be one of {_STRAINS}, got {strain!r}.")
        check_order("AncfBeam2D", "axial_order", axial_order)
        check_order("AncfBeam2D", "bending_order", bending_order)
        for name, value in (
            ("length", length),
            ("rho", rho),
            ("area", area),
            ("second_moment", second_moment),
            ("youngs", youngs),
        ):
            x = jnp.asarray(value, float)
            check_shape("AncfBeam2D", name, x, ())
            check_positive("AncfBeam2D", name, x)
            setattr(self, name, x)
        self.n_elements, self.strain = n_elements, strain
        self.axial_order, self.bending_order = axial_order, bending_order
        self.ncoords = 4 * (n_elements + 1)

    # -- geometry ---------------------------------------------------------------
    @property
    def element_length(self) -> Scalar:
        """$l_e = L / n$ (m)."""
        return self.length / self.n_elements

    def straight_coordinates(self, start=(0.0, 0.0), angle=0.0) -> Float[Array, " nq"]:
        """Unstrained straight configuration from `start` (m) along `angle` (rad)."""
        start = jnp.asarray(start, float)
        check_shape("AncfBeam2D.straight_coordinates", "start", start, (2,))
        return _straight_along(start, jnp.asarray(angle, float), self.length, self.n_elements)

    def _elements(self, q):
        """Element coordinates as `(n, 4, 2)`: rows $r_m, r_m', r_n, r_n'$."""
        return elements(q, self.n_elements, (2, 2))

    def _slope_scale(self):
        le = self.element_length
        return jnp.stack([jnp.ones_like(le), le, jnp.ones_like(le), le])

    def _node_index(self, node: int) -> int:
        return node_index("AncfBeam2D", node, self.n_elements)

    def node_positions(self, q: Float[Array, " nq"]) -> Float[Array, "nodes 2"]:
        """World positions of all nodes, shape `(n_elements + 1, 2)`."""
        return jnp.reshape(q, (self.n_elements + 1, 4))[:, 0:2]

    def node_slopes(self, q: Float[Array, " nq"]) -> Float[Array, "nodes 2"]:
        r"""Slopes $r_k' = \partial r/\partial s$ of all nodes, shape `(n_elements + 1, 2)`."""
        return jnp.reshape(q, (self.n_elements + 1, 4))[:, 2:4]

    def node_position(self, q: Float[Array, " nq"], node: int) -> Float[Array, " 2"]:
        """Position $r_k$ of node `node` (static int; negative counts from the tip)."""
        k = self._node_index(node)
        return q[4 * k : 4 * k + 2]

    def node_slope(self, q: Float[Array, " nq"], node: int) -> Float[Array, " 2"]:
        """Slope $r_k'$ of node `node`."""
        k = self._node_index(node)
        return q[4 * k + 2 : 4 * k + 4]

    def node_angle(self, q: Float[Array, " nq"], node: int) -> Scalar:
        r"""Slope angle $\theta_k = \operatorname{atan2}(r'_{k,y}, r'_{k,x})$ (seed eq. 22)."""
        d = self.node_slope(q, node)
        return jnp.arctan2(d[1], d[0])

    def _locate(self, s):
        """Element index and local coordinate of arc length `s` (clipped to the beam)."""
        return locate(s, self.element_length, self.n_elements)

    def _element_at(self, q, e):
        return element_at(q, e, (2, 2))

    def position(self, q: Float[Array, " nq"], point: Float[Array, " 1"]) -> Float[Array, " 2"]:
        """World position of the material point at arc length `point[0]` (m) of the
        undeformed beam; points outside [0, L] are extrapolated from the end elements."""
        e, xi = self._locate(point[0])
        N = hermite(xi)[0] * self._slope_scale()
        return N @ self._element_at(q, e)

    def slope(self, q: Float[Array, " nq"], point: Float[Array, " 1"]) -> Float[Array, " 2"]:
        r"""Slope $r' = \partial r/\partial s$ at arc length `point[0]`."""
        e, xi = self._locate(point[0])
        dN = hermite(xi)[1] * self._slope_scale() / self.element_length
        return dN @ self._element_at(q, e)

    def axes(self, q: Float[Array, " nq"]) -> Float[Array, "2 2"]:
        r"""Frame at the first node: columns $t = r_0'/|r_0'|$ and $R_{90} t$.

        This is the frame a generic joint or `AppliedTorque` sees; use the node-based
        joints and `AncfNodeTorque` for any other node.
        """
        d = self.node_slope(q, 0)
        t = d / jnp.sqrt(d @ d)
        return jnp.stack([t, jnp.asarray(_R90) @ t], axis=1)

    # -- inertia ------------------------------------------------------------------
    def mass_matrix(self, q: Float[Array, " nq"]) -> Float[Array, "nq nq"]:
        le = self.element_length
        scale = jnp.tile(jnp.stack([jnp.ones_like(le), jnp.ones_like(le), le, le]), self.n_elements + 1)
        M_hat = jnp.asarray(_unit_mass_matrix(self.n_elements))
        return self.rho * self.area * le * (scale[:, None] * M_hat * scale[None, :])

    def _element_mass(self) -> Float[Array, "4 4"]:
        r"""Element mass matrix on the node rows $[r_m, r_m', r_n, r_n']$ (the same on
        both components): $\rho A l_e\, D \hat m D$, $D = \mathrm{diag}(1, l_e, 1, l_e)$."""
        D = self._slope_scale()
        m4 = jnp.asarray(_unit_element_mass())
        return self.rho * self.area * self.element_length * (D[:, None] * m4 * D[None, :])

    def mass_product(self, q: Float[Array, " nq"], a: Float[Array, " nq"]) -> Float[Array, " nq"]:
        """`mass_matrix(q) @ a` element by element (`chain_mass_product`)."""
        return jnp.reshape(chain_mass_product(self._element_mass(), self._elements(a)), (-1,))

    def total_mass(self) -> Scalar:
        return self.rho * self.area * self.length

    def center_of_mass(self, q: Float[Array, " nq"]) -> Float[Array, " 2"]:
        r"""$r_c = \frac1L\int_0^L r\,ds$; per element
        $\int S\,dx = l_e[\tfrac12, \tfrac{l_e}{12}, \tfrac12, -\tfrac{l_e}{12}]$."""
        E = self._elements(q)
        le = self.element_length
        w = jnp.stack([0.5 * jnp.ones_like(le), le / 12, 0.5 * jnp.ones_like(le), -le / 12])
        return jnp.einsum("i,eij->j", w, E) / self.n_elements

    def force(self, q: Float[Array, " nq"], v: Float[Array, " nq"], t: ScalarLike) -> Float[Array, " nq"]:
        # constant mass matrix: no quadratic-velocity terms; elastic force only (its fast
        # kernels in `_ancf2d_forces`)
        return elastic_force(self, q)

    def constraints(self, q: Float[Array, " nq"]) -> Float[Array, " 0"]:
        return jnp.zeros((0,), q.dtype)

    # -- elasticity ---------------------------------------------------------------
    def strains(self, q: Float[Array, " nq"], point: Float[Array, " 1"]) -> tuple[Scalar, Scalar]:
        r"""Axial strain $\varepsilon$ and curvature $\kappa$ (1/m) at arc length `point[0]`."""
        e, xi = self._locate(point[0])
        _, dN, d2N = hermite(xi)
        le, D = self.element_length, self._slope_scale()
        E = self._element_at(q, e)
        return self._measures((dN * D) @ E / le, (d2N * D) @ E / le**2)

    def _measures(self, rp, rpp):
        """$(\\varepsilon, \\kappa)$ from $r'$ and $r''$ (last axis: components)."""
        return self._measures_xy(rp[..., 0], rp[..., 1], rpp[..., 0], rpp[..., 1])

    def _measures_xy(self, rx, ry, px, py):
        """$(\\varepsilon, \\kappa)$ from the components of $r' = (r_x, r_y)$ and
        $r'' = (p_x, p_y)$, elementwise."""
        sq = rx * rx + ry * ry
        cross = rx * py - ry * px
        if self.strain == "stretch":
            return jnp.sqrt(sq) - 1.0, cross / sq
        return 0.5 * (sq - 1.0), cross / (sq * jnp.sqrt(sq))

    def _quadrature(self):
        """Gauss points of one element as linear maps from its node matrix $E$ (4 × 2):
        axial points `Sa` (Ga, 1, 4) give $[r']$, bending points `Sb` (Gb, 2, 4) give
        $[r', r'']$ (shape functions scaled to $d/ds$); with the weights `wa`, `wb`."""
        le, D = self.element_length, self._slope_scale()
        xa, wa = gauss(self.axial_order)
        xb, wb = gauss(self.bending_order)
        Sa = (jnp.asarray(hermite(xa)[1]) * D[None, :] / le)[:, None, :]
        Sb = jnp.stack(
            [jnp.asarray(hermite(xb)[1]) * D[None, :] / le, jnp.asarray(hermite(xb)[2]) * D[None, :] / le**2], axis=1
        )
        return Sa, jnp.asarray(wa), Sb, jnp.asarray(wb)

    def _point_rows(self):
        r"""The Gauss points of `_quadrature` as rows $S = [S_a;\ S_b';\ S_b'']$
        (Ga + 2 Gb, 4) on an element's node rows $[r_m, r_m', r_n, r_n']$, with the
        axial and bending weights."""
        Sa, wa, Sb, wb = self._quadrature()
        return jnp.concatenate([Sa[:, 0], Sb[:, 0], Sb[:, 1]]), wa, wb

    def _axial_density(self, rx, ry):
        r"""$\tfrac12 l_e EA\varepsilon^2$ at Gauss points from the components of $r'$."""
        eps, _ = self._measures_xy(rx, ry, rx, ry)
        return 0.5 * self.element_length * self.youngs * self.area * eps**2

    def _bending_density(self, rx, ry, px, py):
        r"""$\tfrac12 l_e EI\kappa^2$ at Gauss points from the components of $r'$, $r''$."""
        _, kappa = self._measures_xy(rx, ry, px, py)
        return 0.5 * self.element_length * self.youngs * self.second_moment * kappa**2

    def _element_energy(self, E):
        r"""Elastic energy of one element from its node matrix `E` (4 × 2).

        Both components go through one product with the point rows
        $S = [S_a;\ S_b';\ S_b'']$ (Ga + 2 Gb, 4), `E.T @ S.T` (2 × points): batched a
        single matrix product of half the size of one with the component-interleaved
        8-column maps, and the densities (and their gradients) act on whole rows of
        points instead of pairs of components, which XLA vectorizes."""
        S, wa, wb = self._point_rows()
        ga, gb = wa.shape[0], wb.shape[0]
        u = E.T @ S.T
        (rx, ry), (bx, by), (px, py) = u[:, :ga], u[:, ga : ga + gb], u[:, ga + gb :]
        return jnp.sum(wa * self._axial_density(rx, ry)) + jnp.sum(wb * self._bending_density(bx, by, px, py))

    def potential_energy(self, q: Float[Array, " nq"]) -> Scalar:
        r"""Elastic energy $U = \tfrac12\int (EA\varepsilon^2 + EI\kappa^2)\,dx$ (J)."""
        return jnp.sum(jax.vmap(self._element_energy)(self._elements(q)))
