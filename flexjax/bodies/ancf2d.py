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
(`flexjax.bodies.element_forces`), formed from the autodiff Hessians of the Gauss-point
energy densities (`_element_stiffness`).

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

from .._checks import check_positive, check_shape, is_concrete
from .._custom_types import Scalar, ScalarLike
from .base import AbstractBody, ElementChain
from .element_forces import chain_elastic_force

_STRAINS = ("stretch", "green_lagrange")
_R90 = np.array([[0.0, -1.0], [1.0, 0.0]])


def hermite(xi):
    r"""Cubic Hermite functions $N_1..N_4$ and their first two $\xi$-derivatives.

    **Arguments:** `xi`: array of points in [0, 1] (any shape; NumPy or JAX).

    **Returns:** three arrays of shape `xi.shape + (4,)`: $N$, $dN/d\xi$, $d^2N/d\xi^2$.
    The slope functions $N_2$, $N_4$ are to be multiplied by $l_e$.
    """
    xp = jnp if isinstance(xi, jax.Array) else np
    x = xp.asarray(xi)
    x2, x3 = x * x, x * x * x
    one = xp.ones_like(x)
    N = xp.stack([1 - 3 * x2 + 2 * x3, x - 2 * x2 + x3, 3 * x2 - 2 * x3, x3 - x2], axis=-1)
    dN = xp.stack([-6 * x + 6 * x2, 1 - 4 * x + 3 * x2, 6 * x - 6 * x2, 3 * x2 - 2 * x], axis=-1)
    d2N = xp.stack([-6 + 12 * x, -4 + 6 * x, 6 - 12 * x, 6 * x - 2 * one], axis=-1)
    return N, dN, d2N


@functools.cache
def _gauss(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [0, 1]."""
    x, w = np.polynomial.legendre.leggauss(order)
    return 0.5 * (x + 1), 0.5 * w


@functools.cache
def _unit_element_mass() -> np.ndarray:
    r"""$\hat m = \int_0^1 N^T N\,d\xi$ (4 × 4) of the Hermite functions, unit slope scaling.

    Exact: the integrand is a degree-6 polynomial and 4 Gauss points integrate degree 7.
    """
    xi, w = _gauss(4)
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


def _chain_mass_product(m_e, E):
    r"""The assembled product $M a$ of a chain of equal elements, from the element matrix
    `m_e` (2k × 2k, on an element's node rows, acting alike on every component) and the
    element rows `E` (n, 2k, c) of $a$ (element $e$: the k rows of node $e$, then those of
    node $e + 1$).

    **Returns:** the node rows of $M a$, `(n + 1, k, c)`: each element's product added onto
    its two nodes, at a cost linear in n.
    """
    F = jnp.einsum("ij,ejc->eic", m_e, E)
    k = F.shape[1] // 2
    return jnp.pad(F[:, :k], ((0, 1), (0, 0), (0, 0))) + jnp.pad(F[:, k:], ((1, 0), (0, 0), (0, 0)))


def straight_beam_coordinates(start, end, n_elements: int) -> Float[Array, " nq"]:
    r"""Coordinates of a straight, unstrained beam from `start` to `end` (2-vectors, m).

    Node $k$ sits at $r_k = r_0 + \tfrac{k}{n}(r_n - r_0)$ with the unit slope
    $r_k' = (r_n - r_0)/|r_n - r_0|$. The distance must equal the beam length for the
    configuration to be strain-free.

    **Returns:** `q_b`, shape `(4 (n_elements + 1),)`.
    """
    if isinstance(n_elements, bool) or not isinstance(n_elements, int) or n_elements < 1:
        raise ValueError(f"straight_beam_coordinates: `n_elements` must be an int >= 1, got {n_elements!r}.")
    start, end = jnp.asarray(start, float), jnp.asarray(end, float)
    check_shape("straight_beam_coordinates", "start", start, (2,))
    check_shape("straight_beam_coordinates", "end", end, (2,))
    d = end - start
    length = jnp.sqrt(d @ d)
    if is_concrete(length) and not float(length) > 0:
        raise ValueError("straight_beam_coordinates: `start` and `end` coincide.")
    frac = jnp.arange(n_elements + 1, dtype=start.dtype) / n_elements
    pos = start[None, :] + frac[:, None] * d[None, :]
    slope = jnp.broadcast_to(d / length, (n_elements + 1, 2))
    return jnp.concatenate([pos, slope], axis=1).reshape(-1)


def _check_order(name, order):
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 12:
        raise ValueError(f"AncfBeam2D: `{name}` must be an int Gauss order in 1..12, got {order!r}.")


def _element_energy(beam, q_e):
    """Elastic energy of one element from its 8 coordinates (`chain_elastic_force`)."""
    return beam._element_energy(jnp.reshape(q_e, (4, 2)))


def _element_stiffness(beam, q_e):
    """Element Hessians (n, 8, 8) from the element coordinates (n, 8) (`chain_elastic_force`)."""
    return beam._element_stiffness(jnp.reshape(q_e, (-1, 4, 2)))


def _column_force(beam, Q):
    r"""Elastic forces $-\partial U/\partial q$ of the columns of `Q` (nq, B): B
    configurations at once, the beam's parameters scalars or (1, 1, B) arrays (one value
    per column; `length` a scalar).

    The Gauss-point values $u = [r'_a;\ r'_b;\ r''_b]$ of every element and column are
    rows of a (points · 2, elements · B) array, elements and columns along the
    contiguous axis: one matrix product from the element coordinates, the densities'
    autodiff gradients elementwise over whole rows of each point group (no padded
    pieces, so XLA vectorizes them), one product back, and the node assembly. The
    batch is the contiguous axis under `vmap` (`_primal_force`), the elements for one
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
    """The elastic force of one configuration: `_column_force` of one column, the
    elements along the contiguous axis."""
    return _column_force(beam, q[:, None])[:, 0]


@jax.custom_batching.custom_vmap
def _primal_force(beam, q):
    """`_one_force`; under `vmap`, `_column_force` of all samples as columns."""
    return _one_force(beam, q)


@_primal_force.def_vmap
def _primal_force_vmap(axis_size, in_batched, beam, q):
    beam_batched, q_batched = in_batched
    if beam_batched.length:  # the point maps depend on the element length: one beam per sample
        axes = jax.tree_util.tree_map(lambda b: 0 if b else None, beam_batched)
        return jax.vmap(_one_force, (axes, 0 if q_batched else None))(beam, q), True
    Q = jnp.moveaxis(q, 0, -1) if q_batched else jnp.broadcast_to(q[:, None], (q.shape[0], axis_size))
    # per-sample parameters along the last axis of the (point, element, sample) arrays
    beam = jax.tree_util.tree_map(lambda x, b: jnp.reshape(x, (1, 1, axis_size)) if b else x, beam, beam_batched)
    return jnp.moveaxis(_column_force(beam, Q), -1, 0), True


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
        if isinstance(n_elements, bool) or not isinstance(n_elements, int) or n_elements < 1:
            raise ValueError(f"AncfBeam2D: `n_elements` must be an int >= 1, got {n_elements!r}.")
        if strain not in _STRAINS:
            raise ValueError(f"AncfBeam2D: `strain` must be one of {_STRAINS}, got {strain!r}.")
        _check_order("axial_order", axial_order)
        _check_order("bending_order", bending_order)
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
        d = self.length * jnp.stack([jnp.cos(angle), jnp.sin(angle)])
        return straight_beam_coordinates(start, start + d, self.n_elements)

    def _elements(self, q):
        """Element coordinates as `(n, 4, 2)`: rows $r_m, r_m', r_n, r_n'$."""
        nodes = jnp.reshape(q, (self.n_elements + 1, 2, 2))
        return jnp.concatenate([nodes[:-1], nodes[1:]], axis=1)

    def _slope_scale(self):
        le = self.element_length
        return jnp.stack([jnp.ones_like(le), le, jnp.ones_like(le), le])

    def _node_index(self, node: int) -> int:
        n = self.n_elements
        if isinstance(node, bool) or not isinstance(node, int) or not -(n + 1) <= node <= n:
            raise ValueError(
                f"AncfBeam2D: node {node!r} does not exist; the beam has nodes 0..{n} (or -1 for the last)."
            )
        return node % (n + 1)

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
        u = s / self.element_length
        e = jnp.clip(jnp.floor(u), 0, self.n_elements - 1)
        return e.astype(int), u - e

    def _element_at(self, q, e):
        return jnp.reshape(jax.lax.dynamic_slice(q, (4 * e,), (8,)), (4, 2))

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
        """`mass_matrix(q) @ a` element by element (`_chain_mass_product`)."""
        return jnp.reshape(_chain_mass_product(self._element_mass(), self._elements(a)), (-1,))

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
        # constant mass matrix: no quadratic-velocity terms; elastic force only, its values
        # in the column layout of `_column_force`, with 8 x 8 element stiffness matrices
        # as its derivative
        return chain_elastic_force(
            _element_energy, self, q, self.n_elements, 4, 8, _element_stiffness, primal=_primal_force
        )

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
        xa, wa = _gauss(self.axial_order)
        xb, wb = _gauss(self.bending_order)
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

    def _point_maps(self):
        """The Gauss-point maps of `_quadrature` acting on an element's 8 coordinates
        (node-major, component-minor): axial `Ba` (Ga, 2, 8) gives $r'$, bending `Bb`
        (Gb, 4, 8) gives $[r', r'']$."""
        Sa, wa, Sb, wb = self._quadrature()
        kron = lambda S: jnp.einsum("gan,cd->gacnd", S, jnp.eye(2)).reshape(S.shape[0], 2 * S.shape[1], 8)
        return kron(Sa), wa, kron(Sb), wb

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

    def _element_stiffness(self, E):
        r"""Hessians of the element energies, (n, 8, 8), from node matrices `E` (n, 4, 2).

        The energy is a weighted sum of point densities $\psi_g(u_g)$ of inputs
        $u_g = B_g q_e$ that are linear in the coordinates, so
        $K_e = \sum_g w_g B_g^T \nabla^2\psi_g B_g$: autodiff Hessians of the 2- and
        4-input densities instead of the 8-input element energy (cheaper; timings in
        `docs/performance.md`).
        """
        Ba, wa, Bb, wb = self._point_maps()
        e = jnp.reshape(E, (E.shape[0], 8))

        def points(B, w, density):
            flat_density = lambda u: density(*u)  # u: [r'_x, r'_y(, r''_x, r''_y)]
            H = jax.vmap(jax.vmap(jax.hessian(flat_density)))(jnp.einsum("gkm,em->egk", B, e))
            return jnp.einsum("gkm,egkl,g,gln->emn", B, H, w, B)

        return points(Ba, wa, self._axial_density) + points(Bb, wb, self._bending_density)

    def potential_energy(self, q: Float[Array, " nq"]) -> Scalar:
        r"""Elastic energy $U = \tfrac12\int (EA\varepsilon^2 + EI\kappa^2)\,dx$ (J)."""
        return jnp.sum(jax.vmap(self._element_energy)(self._elements(q)))
