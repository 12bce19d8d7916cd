r"""Spatial ANCF beam: fully parameterized two-node elements (seed 001, eq. 1-14).

One `AncfBeam3D` body owns a whole straight-in-reference beam of `n_elements` equal
elements (as `AncfBeam2D` does). Node $k$ carries its position and the three position
gradients, $[r_k,\ r_{k,x},\ r_{k,y},\ r_{k,z}]$ (12 coordinates), so the body has
$12(n+1)$ coordinates and element $e$ uses nodes $e, e+1$: the 24 element coordinates
$e_e = [r_i, r_{i,x}, r_{i,y}, r_{i,z}, r_j, r_{j,x}, r_{j,y}, r_{j,z}]$ of seed eq. 2.
The literature calls this element "3243" (3D, 2 nodes, 4 vectors per node, 3 components).

**Kinematics (seed eq. 1-3).** With element coordinates $(x, y, z)$ in the reference
(undeformed) configuration, $x \in [0, l]$ along the axis and $(y, z)$ over the cross
section, $\zeta = x/l$, $\psi = y/l$, $\xi = z/l$, a material point sits at
$r = S e_e$, $S = [s_1 \dots s_8] \otimes I_3$ with
$s_1 = 1 - 3\zeta^2 + 2\zeta^3$, $s_2 = l(\zeta - 2\zeta^2 + \zeta^3)$,
$s_3 = l(\psi - \zeta\psi)$, $s_4 = l(\xi - \zeta\xi)$, $s_5 = 3\zeta^2 - 2\zeta^3$,
$s_6 = l(\zeta^3 - \zeta^2)$, $s_7 = l\zeta\psi$, $s_8 = l\zeta\xi$.
Rigid translations and rotations lie in this space exactly.

**Mass (seed eq. 4-6).** Constant, $M = \int_V \rho\, S^T S\,dV$, integrated exactly by
Gauss quadrature along the axis and over the section. No quadratic-velocity terms.

**Elastic forces (seed eq. 7-12).** The reference configuration is straight and
unstrained, so the material coordinates are $(x, y, z)$ and the deformation gradient is
$F = \partial r/\partial(x, y, z) = [r_{,x}\ r_{,y}\ r_{,z}]$ ($J_0 = I$ in eq. 7),
Green-Lagrange strain $E = \tfrac12(F^T F - I)$ (eq. 8-9), $U = \int_V W\,dV$ by Gauss
quadrature (`axial_order` points per element times the section rule of
`section_order`), $Q = -\partial U/\partial q$ by `jax.grad` (eq. 12), its derivative
the assembled element Hessians (`flexjax.bodies._element_forces`). Two energy densities
$W$ (`formulation`):

- `"split"` (default), free of Poisson locking: the strain energy is split into a beam
  part with a uniaxial law for the axial strain and the shear moduli for the
  axial-transverse shears, and a cross-section part that alone carries the Poisson
  coupling (the structural split of Gerstmayr & Shabana 2006 and Nachbagauer, Gruber &
  Gerstmayr 2013, "Poisson effect only in the cross section"):
  $W = \tfrac{E}{2}E_{xx}^2
  + 2G\big[k_s(\bar E_{xy}^2 + \bar E_{xz}^2)
  + k_t\big((E_{xy} - \bar E_{xy})^2 + (E_{xz} - \bar E_{xz})^2\big)\big]
  + \tfrac{E}{2(1-\nu^2)}(E_{yy}^2 + E_{zz}^2 + 2\nu E_{yy}E_{zz}) + 2G E_{yz}^2$,
  $G = E/(2(1+\nu))$. $\bar E_{xy}, \bar E_{xz}$ are the section means (the transverse
  shear; the section fields are linear in $(y, z)$, so the mean is the centroid value),
  weighted by Cowper's factor $k_s$ (`section.shear_factor`); the remainder, linear over
  the section, is the twist, weighted by $k_t = J/(I_y + I_z)$ with St-Venant's $J$
  (`section.torsion_constant`): the linear section field has no warping, so without
  $k_t$ the torsional stiffness would be $G I_p$. Bending and stretching see $E$ for
  every $0 \le \nu < 0.5$; the section part (plane stress in the section) stays finite
  as $\nu \to 0.5$. The section does not contract under axial stress (as in beam
  theory). At $\nu = 0$, $k_s = k_t = 1$ it equals the continuum law.
- `"continuum"`: St. Venant-Kirchhoff, $W = \tfrac{\lambda}{2}(\operatorname{tr} E)^2
  + \mu \operatorname{tr}(E^2)$ (eq. 11 with the isotropic $H$),
  $\lambda = E\nu/((1+\nu)(1-2\nu))$, $\mu = G$, the seed's element. The cross-section
  gradients are interpolated linearly and the section cannot deform non-uniformly, so
  with $\nu \neq 0$ bending sees $E(1-\nu)/((1+\nu)(1-2\nu))$ (Poisson locking; a
  warning is issued for $\nu > 0$), and the torsional stiffness is $G I_p$. Use it with
  $\nu = 0$, as the seed does.

The section part of `"split"` is integrated with 2 points along the axis by default
(`integration="selective"`): inside a bent element the linearly interpolated section
vectors shorten, and a full rule resists that (thickness locking at large rotations).
The continuum law with the defaults (`"full"`, 5 axial points, 3 per section direction)
is integrated exactly at $\nu = 0$. See `docs/ancf3d.md` for measured numbers.

**Gravity (seed eq. 13-14).** Every point is linear in $q$ and the sections are
symmetric, so `center_of_mass` is exact and `Gravity` gives $Q = m_e\,\int S^T g\,dV/V$.

Material points are addressed as `point = (s, y, z)`: arc length $s \in [0, L]$ of the
undeformed beam and section coordinates $(y, z)$ (m).
"""

import warnings
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_finite, check_positive, check_shape, is_concrete, safe_norm
from .._custom_types import Scalar, ScalarLike
from ._ancf3d_forces import elastic_force
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
from .sections import AbstractSection


# -- shape functions ---------------------------------------------------------------
def shape_functions(zeta, y, z, l):
    r"""Seed eq. 3: $s_1..s_8$ and their $x$, $y$, $z$ derivatives at one point.

    **Arguments:** `zeta` $= x/l$, section coordinates `y`, `z` (m), element length `l`.

    **Returns:** `(s, ds)`: `s` shape `(8,)`, `ds` shape `(8, 3)` with columns
    $\partial s/\partial x$, $\partial s/\partial y$, $\partial s/\partial z$.
    """
    N, dN, _ = hermite(zeta)
    zero = jnp.zeros_like(zeta)
    s = jnp.stack([N[0], l * N[1], y * (1 - zeta), z * (1 - zeta), N[2], l * N[3], y * zeta, z * zeta])
    s_x = jnp.stack([dN[0] / l, dN[1], -y / l, -z / l, dN[2] / l, dN[3], y / l, z / l])
    s_y = jnp.stack([zero, zero, 1 - zeta, zero, zero, zero, zeta, zero])
    s_z = jnp.stack([zero, zero, zero, 1 - zeta, zero, zero, zero, zeta])
    return s, jnp.stack([s_x, s_y, s_z], axis=1)


def _unit(d):
    return d / jnp.sqrt(d @ d)


def _frame_from(x_axis, y_hint):
    """Right-handed orthonormal frame (columns) with first axis along `x_axis`."""
    t = _unit(x_axis)
    n = _unit(y_hint - (y_hint @ t) * t)
    return jnp.stack([t, n, jnp.cross(t, n)], axis=1)


def straight_beam_coordinates_3d(start, end, n_elements: int, y_axis=None) -> Float[Array, " nq"]:
    r"""Coordinates of a straight, unstrained 3D beam from `start` to `end` (3-vectors, m).

    Node $k$ sits at $r_k = r_0 + \tfrac{k}{n}(r_n - r_0)$ with the gradients
    $[r_{,x}, r_{,y}, r_{,z}]$ = the orthonormal beam frame: $r_{,x}$ along the beam,
    $r_{,y}$ the part of `y_axis` normal to it (default: the world y axis, or the world
    z axis for a beam within 25° of y), $r_{,z} = r_{,x} \times r_{,y}$. The distance
    must equal the beam length for the configuration to be strain-free.

    **Returns:** `q_b`, shape `(12 (n_elements + 1),)`.
    """
    owner = "straight_beam_coordinates_3d"
    start, d, length = check_segment(owner, start, end, n_elements, 3)
    t = d / length
    if y_axis is None:
        y_axis = jnp.where(jnp.abs(t[1]) < 0.9, jnp.array([0.0, 1.0, 0.0]), jnp.array([0.0, 0.0, 1.0]))
    y_axis = jnp.asarray(y_axis, float)
    check_shape(owner, "y_axis", y_axis, (3,))
    normal = y_axis - (y_axis @ t) * t
    if is_concrete(normal) and not float(jnp.sqrt(normal @ normal)) > 1e-9 * float(jnp.sqrt(y_axis @ y_axis) + 1e-300):
        raise ValueError(f"{owner}: `y_axis` {np.asarray(y_axis)} is parallel to the beam; give a normal direction.")
    return _straight(start, _frame_from(d, y_axis), length, n_elements)


def _straight(start, axes, length, n):
    """Straight beam from `start` along the first column of `axes`, with the columns of
    `axes` as the gradients $r_{,x}, r_{,y}, r_{,z}$ of every node."""
    return straight_nodes(start, length * axes[:, 0], axes.T, n)


_INTEGRATIONS = ("full", "selective")
_FORMULATIONS = ("split", "continuum")
# strain components integrated in full by `integration="selective"`: E_xx, E_xy, E_xz
_AXIAL_MASK = np.array([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])


def _locking_factor(nu):
    """Bending modulus of the locked continuum element over $E$."""
    return (1 - nu) / ((1 + nu) * (1 - 2 * nu))


class AncfBeam3D(AbstractBody):
    r"""A spatial ANCF beam of `n_elements` fully parameterized elements (one body).

    See the module docstring for the formulation. Coordinates: node $k$ owns
    `q_b[12k:12k+12]` $= [r_k, r_{k,x}, r_{k,y}, r_{k,z}]$.
    """

    length: Float[Array, ""]
    rho: Float[Array, ""]
    youngs: Float[Array, ""]
    poisson: Float[Array, ""]
    section: AbstractSection
    n_elements: int = eqx.field(static=True)
    axial_order: int = eqx.field(static=True)
    section_order: int = eqx.field(static=True)
    integration: str = eqx.field(static=True)
    formulation: str = eqx.field(static=True)
    ncoords: int = eqx.field(static=True)
    dim: ClassVar[int] = 3
    nconstraints: ClassVar[int] = 0
    # element e couples nodes e and e+1, q_b[12e:12e+24]: mass, elastic force, points (linear
    # in q) and `axes` (node 0) respect it
    coupling: ClassVar[ElementChain] = ElementChain(stride=12, width=24)
    constant_mass: ClassVar[bool] = True

    def __init__(
        self,
        length,
        rho,
        youngs,
        section: AbstractSection,
        n_elements: int = 4,
        *,
        poisson=0.0,
        axial_order: int = 5,
        section_order: int = 3,
        integration: str | None = None,
        formulation: str = "split",
    ):
        r"""**Arguments:**

        - `length`: undeformed length $L$ (m).
        - `rho`: density $\rho$ (kg/m³).
        - `youngs`: Young's modulus $E$ (Pa).
        - `section`: a `RectangularSection` or `CircularSection` (its sizes are leaves).
        - `n_elements`: number of equal elements (static, >= 1).
        - `poisson`: Poisson ratio $\nu$, $0 \le \nu < 0.5$ (default 0).
        - `axial_order`: Gauss points per element along the axis (static, default 5).
        - `section_order`: section rule order (static, default 3: 3x3 points on a
          rectangle, 3 radii x 6 angles on a disc).
        - `integration`: `"full"` (every term with the rules above) or `"selective"`
          (a remedy for the thickness locking of bent elements at large rotations: the
          section-deformation terms, $E_{yy}, E_{zz}, E_{yz}$, and for `"continuum"` also
          the volumetric term $\tfrac{\lambda}{2}(\operatorname{tr} E)^2$, with 2 points
          along the axis); static. Default (`None`): `"selective"` for `"split"`, `"full"`
          for `"continuum"` (the seed's element as it was).
        - `formulation`: `"split"` (default: no Poisson locking, St-Venant torsion) or
          `"continuum"` (the seed's St. Venant-Kirchhoff element; Poisson locking for
          $\nu > 0$); static. See the module docstring.

        `length`, `rho`, `youngs`, `poisson` are scalar pytree leaves (differentiable,
        batchable); value checks are skipped when they are tracers.
        """
        check_n_elements("AncfBeam3D", n_elements)
        check_order("AncfBeam3D", "axial_order", axial_order)
        check_order("AncfBeam3D", "section_order", section_order)
        if integration is None:
            integration = "selective" if formulation == "split" else "full"
        if integration not in _INTEGRATIONS:
            raise ValueError(f"AncfBeam3D: `integration` must be one of {_INTEGRATIONS}, got {integration!r}.")
        if formulation not in _FORMULATIONS:
            raise ValueError(f"AncfBeam3D: `formulation` must be one of {_FORMULATIONS}, got {formulation!r}.")
        if not isinstance(section, AbstractSection):
            raise ValueError(
                f"AncfBeam3D: `section` must be a RectangularSection or CircularSection, got {type(section).__name__}."
            )
        for name, value in (("length", length), ("rho", rho), ("youngs", youngs)):
            x = jnp.asarray(value, float)
            check_shape("AncfBeam3D", name, x, ())
            check_positive("AncfBeam3D", name, x)
            setattr(self, name, x)
        self.poisson = jnp.asarray(poisson, float)
        check_shape("AncfBeam3D", "poisson", self.poisson, ())
        check_finite("AncfBeam3D", "poisson", self.poisson)
        if is_concrete(self.poisson) and not 0.0 <= float(self.poisson) < 0.5:
            raise ValueError(
                f"AncfBeam3D: `poisson` must lie in [0, 0.5) (an isotropic beam material), got {float(self.poisson)}."
            )
        if formulation == "continuum" and is_concrete(self.poisson) and float(self.poisson) > 0:
            warnings.warn(
                f"AncfBeam3D: formulation='continuum' with poisson={float(self.poisson)} locks: bending is "
                f"{_locking_factor(float(self.poisson)):.3f} times too stiff; use the default formulation='split'.",
                stacklevel=2,
            )
        self.section = section
        self.n_elements, self.axial_order, self.section_order = n_elements, axial_order, section_order
        self.integration, self.formulation = integration, formulation
        self.ncoords = 12 * (n_elements + 1)

    # -- geometry -------------------------------------------------------------------
    @property
    def element_length(self) -> Scalar:
        """$l = L / n$ (m)."""
        return self.length / self.n_elements

    def straight_coordinates(self, start=(0.0, 0.0, 0.0), axes=None) -> Float[Array, " nq"]:
        """Unstrained straight configuration from `start` (m); `axes` is the rotation
        matrix whose columns are the beam's x (axis), y and z directions in the world
        (default the identity: along +x)."""
        start = jnp.asarray(start, float)
        check_shape("AncfBeam3D.straight_coordinates", "start", start, (3,))
        axes = jnp.eye(3) if axes is None else jnp.asarray(axes, float)
        check_shape("AncfBeam3D.straight_coordinates", "axes", axes, (3, 3))
        return _straight(start, axes, self.length, self.n_elements)

    def _nodes(self, q):
        """Nodal vectors as `(n + 1, 4, 3)`: rows $r, r_{,x}, r_{,y}, r_{,z}$."""
        return jnp.reshape(q, (self.n_elements + 1, 4, 3))

    def _elements(self, q):
        """Element coordinates as `(n, 8, 3)` (seed eq. 2 ordering)."""
        return elements(q, self.n_elements, (4, 3))

    def node_index(self, node: int) -> int:
        """Normalized index of `node` (static int; negative counts from the tip)."""
        return node_index("AncfBeam3D", node, self.n_elements)

    def node_position(self, q: Float[Array, " nq"], node: int) -> Float[Array, " 3"]:
        """Position $r_k$ of node `node`."""
        k = self.node_index(node)
        return q[12 * k : 12 * k + 3]

    def node_gradients(self, q: Float[Array, " nq"], node: int) -> Float[Array, "3 3"]:
        r"""Gradient matrix $F_k = [r_{k,x}\ r_{k,y}\ r_{k,z}]$ (columns) of node `node`."""
        k = self.node_index(node)
        return jnp.reshape(q[12 * k + 3 : 12 * k + 12], (3, 3)).T

    def node_positions(self, q: Float[Array, " nq"]) -> Float[Array, "nodes 3"]:
        """World positions of all nodes, shape `(n_elements + 1, 3)`."""
        return self._nodes(q)[:, 0, :]

    def node_axes(self, q: Float[Array, " nq"], node: int) -> Float[Array, "3 3"]:
        r"""Orthonormal frame of node `node`: $t = r_{,x}/|r_{,x}|$, then $r_{,y}$ made
        normal to $t$, then $t \times n$ (Gram-Schmidt; the rotation at the node when the
        node is unsheared)."""
        F = self.node_gradients(q, node)
        return _frame_from(F[:, 0], F[:, 1])

    def axes(self, q: Float[Array, " nq"]) -> Float[Array, "3 3"]:
        """Frame at the first node (`node_axes(q, 0)`); this is the frame a generic joint
        sees; the joints of `flexjax.joints.ancf3d` address any node."""
        return self.node_axes(q, 0)

    def _locate(self, s):
        """Element index and $\\zeta$ of arc length `s` (clipped to the beam)."""
        return locate(s, self.element_length, self.n_elements)

    def _element_at(self, q, e):
        return element_at(q, e, (4, 3))

    def position(self, q: Float[Array, " nq"], point: Float[Array, " 3"]) -> Float[Array, " 3"]:
        """World position of the material point `point = (s, y, z)` (m): arc length $s$
        of the undeformed beam and section coordinates; $s$ outside [0, L] is
        extrapolated from the end elements."""
        e, zeta = self._locate(point[0])
        s, _ = shape_functions(zeta, point[1], point[2], self.element_length)
        return s @ self._element_at(q, e)

    def deformation_gradient(self, q: Float[Array, " nq"], point: Float[Array, " 3"]) -> Float[Array, "3 3"]:
        r"""$F = [r_{,x}\ r_{,y}\ r_{,z}]$ at `point = (s, y, z)` (seed eq. 7)."""
        e, zeta = self._locate(point[0])
        _, ds = shape_functions(zeta, point[1], point[2], self.element_length)
        return self._element_at(q, e).T @ ds

    # -- inertia --------------------------------------------------------------------
    def _section_rule(self):
        return self.section.quadrature(self.section_order)

    def _element_mass(self) -> Float[Array, "8 8"]:
        r"""Element mass matrix on the nodal vectors $[r_i, r_{i,x}, r_{i,y}, r_{i,z}, r_j, \dots]$
        (the same on the three components), seed eq. 6."""
        # integrand degree 6 in x (4 points exact), 2 in (y, z) (order 2 exact)
        xa, wa = gauss(4)
        yz, wyz = self.section.quadrature(2)
        l = self.element_length
        s = jax.vmap(lambda x: jax.vmap(lambda p: shape_functions(x, p[0], p[1], l)[0])(yz))(jnp.asarray(xa))
        return self.rho * l * jnp.einsum("a,b,abi,abj->ij", jnp.asarray(wa), wyz, s, s)

    def mass_matrix(self, q: Float[Array, " nq"]) -> Float[Array, "nq nq"]:
        m8 = self._element_mass()
        n = self.n_elements
        idx = 4 * np.arange(n)[:, None] + np.arange(8)[None, :]  # element e owns nodal vectors 4e..4e+7
        m = jnp.zeros((4 * (n + 1), 4 * (n + 1)), q.dtype)
        m = m.at[idx[:, :, None], idx[:, None, :]].add(jnp.broadcast_to(m8, (n, 8, 8)))
        return jnp.kron(m, jnp.eye(3, dtype=q.dtype))

    def mass_product(self, q: Float[Array, " nq"], a: Float[Array, " nq"]) -> Float[Array, " nq"]:
        """`mass_matrix(q) @ a` element by element (`chain_mass_product`)."""
        return jnp.reshape(chain_mass_product(self._element_mass(), self._elements(a)), (-1,))

    def total_mass(self) -> Scalar:
        return self.rho * self.section.area() * self.length

    def center_of_mass(self, q: Float[Array, " nq"]) -> Float[Array, " 3"]:
        r"""$r_c = \frac{1}{V}\int_V r\,dV$; the section is symmetric, so per element
        $\int S\,dV/A = l[\tfrac12, \tfrac{l}{12}, 0, 0, \tfrac12, -\tfrac{l}{12}, 0, 0]$."""
        l = self.element_length
        half, tw, zero = 0.5 * jnp.ones_like(l), l / 12, jnp.zeros_like(l)
        w = jnp.stack([half, tw, zero, zero, half, -tw, zero, zero])
        return jnp.einsum("i,eij->j", w, self._elements(q)) / self.n_elements

    def force(self, q: Float[Array, " nq"], v: Float[Array, " nq"], t: ScalarLike) -> Float[Array, " nq"]:
        # seed eq. 12; constant mass matrix: no quadratic-velocity terms. Its derivative
        # is assembled from 24 x 24 element stiffness matrices (`_ancf3d_forces`)
        return elastic_force(self, q)

    def constraints(self, q: Float[Array, " nq"]) -> Float[Array, " 0"]:
        return jnp.zeros((0,), q.dtype)

    # -- elasticity -----------------------------------------------------------------
    def lame(self) -> tuple[Scalar, Scalar]:
        r"""Lamé parameters $(\lambda, \mu)$ from $E$ and $\nu$ (Pa)."""
        nu = self.poisson
        return self.youngs * nu / ((1 + nu) * (1 - 2 * nu)), self.youngs / (2 * (1 + nu))

    def _strains(self, E, axial_order, rule):
        """Green-Lagrange strains `(g, p, 3, 3)` at `axial_order` Gauss points along one
        element with coordinates `E` `(8, 3)` times the section `rule` `(points,
        weights)`, and the volume weights `(g, p)`."""
        xa, wa = gauss(axial_order)
        yz, wyz = rule
        l = self.element_length
        # shape derivatives at every quadrature point: identical for all elements
        ds = jax.vmap(lambda x: jax.vmap(lambda p: shape_functions(x, p[0], p[1], l)[1])(yz))(jnp.asarray(xa))
        F = jnp.einsum("ai,gpaj->gpij", E, ds)
        C = jnp.einsum("...ki,...kj->...ij", F, F)
        Eg = 0.5 * (C - jnp.broadcast_to(jnp.eye(3, dtype=F.dtype), C.shape))
        return Eg, l * jnp.asarray(wa)[:, None] * wyz[None, :]

    def _split_factors(self):
        r"""$(G, k_s, k_t)$ of the split law: shear modulus, Cowper's factor and
        $J/(I_y + I_z)$."""
        nu = self.poisson
        shear = self.youngs / (2 * (1 + nu))
        ip = jnp.sum(self.section.second_moments())
        return shear, self.section.shear_factor(nu), self.section.torsion_constant() / ip

    def _beam_density(self, Eg, Ebar):
        """Split law, beam part: axial, transverse shear (section mean `Ebar`) and twist."""
        G, ks, kt = self._split_factors()
        dxy, dxz = Eg[..., 0, 1] - Ebar[..., 0, 1], Eg[..., 0, 2] - Ebar[..., 0, 2]
        return 0.5 * self.youngs * Eg[..., 0, 0] ** 2 + 2 * G * (
            ks * (Ebar[..., 0, 1] ** 2 + Ebar[..., 0, 2] ** 2) + kt * (dxy**2 + dxz**2)
        )

    def _section_density(self, Eg):
        """Split law, cross-section part: plane stress in the section (the only Poisson
        coupling)."""
        nu, G = self.poisson, self.youngs / (2 * (1 + self.poisson))
        eyy, ezz, eyz = Eg[..., 1, 1], Eg[..., 2, 2], Eg[..., 1, 2]
        return 0.5 * self.youngs / (1 - nu**2) * (eyy**2 + ezz**2 + 2 * nu * eyy * ezz) + 2 * G * eyz**2

    def _split_stress(self, Eg, Ebar):
        """Second Piola-Kirchhoff stress of the split law (symmetric 3x3)."""
        G, ks, kt = self._split_factors()
        nu, Y = self.poisson, self.youngs
        sxy, sxz = (2 * G * (ks * Ebar[0, k] + kt * (Eg[0, k] - Ebar[0, k])) for k in (1, 2))
        syy = Y / (1 - nu**2) * (Eg[1, 1] + nu * Eg[2, 2])
        szz = Y / (1 - nu**2) * (Eg[2, 2] + nu * Eg[1, 1])
        syz = 2 * G * Eg[1, 2]
        return jnp.stack([jnp.stack([Y * Eg[0, 0], sxy, sxz]), jnp.stack([sxy, syy, syz]), jnp.stack([sxz, syz, szz])])

    def _split_energy(self, E, rule):
        """Elastic energy of one element under the split law (module docstring): the beam
        part with the full rule, the section part with the full rule or, selective, with
        2 points along the axis."""
        Eg, w = self._strains(E, self.axial_order, rule)
        # section means at each axial point (the shear fields are linear over the section)
        Ebar = jnp.einsum("gp,gpij->gij", w, Eg) / jnp.sum(w, axis=1)[:, None, None]
        beam = jnp.sum(w * self._beam_density(Eg, Ebar[:, None]))
        if self.integration == "full":
            return beam + jnp.sum(w * self._section_density(Eg))
        # selective: the section terms with 2 points along the axis (thickness locking)
        Eg2, w2 = self._strains(E, 2, rule)
        return beam + jnp.sum(w2 * self._section_density(Eg2))

    def _element_energy(self, E):
        """Elastic energy of one element with coordinates `E` `(8, 3)` (J)."""
        rule = self._section_rule()
        if self.formulation == "split":
            return self._split_energy(E, rule)
        lam, mu = self.lame()
        trace = lambda Eg: jnp.trace(Eg, axis1=-2, axis2=-1)

        def integrate(order, density):
            Eg, w = self._strains(E, order, rule)
            return jnp.sum(w * density(Eg))

        if self.integration == "full":
            return integrate(
                self.axial_order, lambda Eg: 0.5 * lam * trace(Eg) ** 2 + mu * jnp.sum(Eg * Eg, axis=(-2, -1))
            )
        # selective: the axial and transverse-shear terms in full; the section-deformation
        # terms (E_yy, E_zz, E_yz) and the volumetric term with 2 points along the axis.
        # Linear interpolation of r_y, r_z shortens them in a bent element (a strain
        # quadratic in x); the 2-point rule does not see that mode (thickness locking)
        axial = jnp.asarray(_AXIAL_MASK, E.dtype)
        return integrate(self.axial_order, lambda Eg: mu * jnp.einsum("...ij,ij->...", Eg * Eg, axial)) + integrate(
            2, lambda Eg: 0.5 * lam * trace(Eg) ** 2 + mu * jnp.einsum("...ij,ij->...", Eg * Eg, 1 - axial)
        )

    def potential_energy(self, q: Float[Array, " nq"]) -> Scalar:
        r"""Elastic energy $U = \int_V W(E)\,dV$ (J), seed eq. 11, with $W$ of the
        `formulation` (module docstring)."""
        return jnp.sum(jax.vmap(self._element_energy)(self._elements(q)))

    def green_lagrange(self, q: Float[Array, " nq"], point: Float[Array, " 3"]) -> Float[Array, "3 3"]:
        r"""Green-Lagrange strain $E = \tfrac12(F^T F - I)$ at `point` (seed eq. 9)."""
        F = self.deformation_gradient(q, point)
        return 0.5 * (F.T @ F - jnp.eye(3, dtype=F.dtype))

    def stress(self, q: Float[Array, " nq"], point: Float[Array, " 3"]) -> Float[Array, "3 3"]:
        r"""Cauchy stress $\sigma = F S F^T/\det F$ (Pa, world frame) at `point`, with the
        second Piola-Kirchhoff stress $S = \partial W/\partial E$: for `"continuum"`
        $S = \lambda \operatorname{tr}(E) I + 2\mu E$; for `"split"` the derivative of
        the split law, its section means taken at the centroid $(s, 0, 0)$ (the shear
        of the linear section field; no warping stresses)."""
        F = self.deformation_gradient(q, point)
        Eg = self.green_lagrange(q, point)
        if self.formulation == "split":
            Ebar = self.green_lagrange(q, point.at[1:].set(0.0))
            S = self._split_stress(Eg, Ebar)
        else:
            lam, mu = self.lame()
            S = lam * jnp.trace(Eg) * jnp.eye(3, dtype=F.dtype) + 2 * mu * Eg
        return F @ S @ F.T / jnp.linalg.det(F)

    def von_mises(self, q: Float[Array, " nq"], point: Float[Array, " 3"]) -> Scalar:
        r"""Von Mises equivalent stress $\sqrt{\tfrac32\, s : s}$ (Pa) of the Cauchy stress
        at `point = (s, y, z)`, $s$ its deviator (the seed's "equivalent stress")."""
        sigma = self.stress(q, point)
        dev = sigma - jnp.trace(sigma) / 3 * jnp.eye(3, dtype=sigma.dtype)
        return jnp.sqrt(1.5) * safe_norm(dev.reshape(-1))
