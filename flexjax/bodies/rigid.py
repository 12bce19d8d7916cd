r"""Rigid bodies in natural coordinates (NCF) and in centroidal coordinates.

Natural-coordinate bodies describe a rigid body by basic points and unit vectors, so
every material point is an affine function of the coordinates,
$r(p) = C(p)\,q_b$, and the mass matrix $M = \int C(p)^T C(p)\,dm$ is constant.
It depends on the mass distribution only through the mass $m$, the first moment
$m c$ and the second moment $\Pi = \int p p^T dm = J + m c c^T$, with
$J = \tfrac12 \operatorname{tr}(I_c) 1 - I_c$ from the inertia tensor $I_c$ about the
centre of mass (seed 001, eq. 29-30: "mass matrix from the virtual power of the
inertia forces"). Rigidity is imposed by internal constraints (constant distances and
angles), returned by `constraints`.
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_finite, check_inertia_tensor, check_positive, check_shape
from .._custom_types import Scalar
from .base import AbstractBody

_R90 = jnp.array([[0.0, -1.0], [1.0, 0.0]])


def _affine_mass_matrix(position, ncoords, npoint, mass, com, second_moment):
    r"""$M = \int C^T C\,dm$ for $r(p) = (C_0 + \sum_k p_k C_k)\,q$, exactly:
    $M = \sum_{ab} \Pi_{ab} C_a^T C_b$ over $a, b \in \{0, 1..k\}$ with the mass moments
    $\Pi = [[m, m c^T], [m c, J + m c c^T]]$ (one traced Jacobian for all points)."""
    q0 = jnp.zeros(ncoords)
    points = jnp.concatenate([jnp.zeros((1, npoint)), jnp.eye(npoint)])
    jac = jax.vmap(jax.jacfwd(position), (None, 0))(q0, points)  # constant in q: the body is affine
    c = jnp.concatenate([jac[:1], jac[1:] - jac[:1]])  # C_0, C_1 .. C_k
    mc = mass * com
    pi = jnp.block([[mass[None, None], mc[None, :]], [mc[:, None], second_moment + mass * jnp.outer(com, com)]])
    m = jnp.einsum("ab,aij,bik->jk", pi, c, c)
    return 0.5 * (m + m.T)


def _second_moment_from_inertia(inertia):
    r"""$J = \int (p-c)(p-c)^T dm = \tfrac12 \operatorname{tr}(I_c)\,1 - I_c$."""
    return 0.5 * jnp.trace(inertia) * jnp.eye(3) - inertia


class AbstractNaturalBody(AbstractBody):
    """A rigid body whose points are affine in its coordinates (constant mass matrix).

    Subclasses give `position`, `constraints`, `axes`, the mass `mass`, the centre of
    mass `com` in body-frame point coordinates and `_second_moment()` about it.
    """

    mass: eqx.AbstractVar[Float[Array, ""]]
    com: eqx.AbstractVar[Float[Array, " p"]]
    npoint: eqx.AbstractClassVar[int]
    constant_mass: ClassVar[bool] = True

    @abc.abstractmethod
    def _second_moment(self) -> Float[Array, "p p"]:
        """Second moment of mass about the centre of mass, in point coordinates."""

    def mass_matrix(self, q):
        return _affine_mass_matrix(self.position, self.ncoords, self.npoint, self.mass, self.com, self._second_moment())

    def force(self, q, v, t):
        # constant mass matrix: no quadratic-velocity terms
        return jnp.zeros_like(q)

    def total_mass(self):
        return self.mass

    def center_of_mass(self, q):
        return self.position(q, self.com)

    def potential_energy(self, q):
        return jnp.zeros((), q.dtype)


class PointMass(AbstractNaturalBody):
    """A particle; its coordinates are its position. Body points are ignored."""

    mass: Float[Array, ""]
    com: Float[Array, " 1"]
    dim: int = eqx.field(static=True)
    ncoords: int = eqx.field(static=True)
    nconstraints: ClassVar[int] = 0
    npoint: ClassVar[int] = 1

    def __init__(self, mass, dim: int = 2):
        """**Arguments:** `mass` (kg, > 0); `dim` 2 or 3."""
        if dim not in (2, 3):
            raise ValueError(f"PointMass: `dim` must be 2 or 3, got {dim}.")
        self.mass = jnp.asarray(mass, float)
        check_shape("PointMass", "mass", self.mass, ())
        check_positive("PointMass", "mass", self.mass)
        self.com = jnp.zeros(1)
        self.dim = dim
        self.ncoords = dim

    def _second_moment(self):
        return jnp.zeros((1, 1))

    def position(self, q, point):
        return q

    def constraints(self, q):
        return jnp.zeros((0,), q.dtype)

    def axes(self, q):
        raise NotImplementedError("a PointMass has no orientation; use a rigid body")


def _bar_parameters(owner, mass, length, com, inertia, default_com):
    """Mass, length, centre of mass and inertia of a bar with slender-bar defaults."""
    mass, length = jnp.asarray(mass, float), jnp.asarray(length, float)
    com = jnp.asarray(default_com(length) if com is None else com, float)
    inertia = jnp.asarray(mass * length**2 / 12.0 if inertia is None else inertia, float)
    for name, x in (("mass", mass), ("length", length), ("inertia", inertia)):
        check_shape(owner, name, x, ())
        check_positive(owner, name, x)
    return mass, length, com, inertia


class RigidBar2D(AbstractNaturalBody):
    r"""Planar rigid body in natural coordinates: two basic points, $q_b = [r_i, r_j]$.

    A body point with frame coordinates $p = (x, y)$ (origin at $r_i$, x-axis towards
    $r_j$) sits at $r = r_i + \tfrac{x}{L} d + \tfrac{y}{L} R_{90} d$, $d = r_j - r_i$.
    One internal constraint keeps $|d| = L$: $\Phi = (d^T d - L^2)/(2L)$.
    """

    mass: Float[Array, ""]
    length: Float[Array, ""]
    com: Float[Array, " 2"]
    inertia: Float[Array, ""]
    ncoords: ClassVar[int] = 4
    dim: ClassVar[int] = 2
    nconstraints: ClassVar[int] = 1
    point_size: ClassVar[int] = 2
    npoint: ClassVar[int] = 2

    def __init__(self, mass, length, com=None, inertia=None):
        """**Arguments:**

        - `mass`: kg, > 0.
        - `length`: distance between the two basic points, m, > 0.
        - `com`: centre of mass in the body frame, default the midpoint `(L/2, 0)`.
        - `inertia`: moment of inertia about the centre of mass, default the slender
          uniform bar $m L^2/12$.
        """
        self.mass, self.length, self.com, self.inertia = _bar_parameters(
            "RigidBar2D", mass, length, com, inertia, lambda L: jnp.stack([0.5 * L, jnp.zeros_like(L)])
        )
        check_shape("RigidBar2D", "com", self.com, (2,))
        check_finite("RigidBar2D", "com", self.com)

    def _second_moment(self):
        # planar bodies: only the polar moment enters M, so split it evenly
        return 0.5 * self.inertia * jnp.eye(2)

    def position(self, q, point):
        d = q[2:4] - q[0:2]
        return q[0:2] + (point[0] * d + point[1] * (_R90 @ d)) / self.length

    def constraints(self, q):
        d = q[2:4] - q[0:2]
        return jnp.atleast_1d((d @ d - self.length**2) / (2 * self.length))

    def axes(self, q):
        d = (q[2:4] - q[0:2]) / self.length
        return jnp.stack([d, _R90 @ d], axis=1)


class RigidBar3D(AbstractNaturalBody):
    r"""Slender spatial bar with two basic points, $q_b = [r_i, r_j]$ (6 coordinates).

    Points lie on the axis: frame coordinate $s$ (shape `(1,)`) gives
    $r = r_i + \tfrac{s}{L}(r_j - r_i)$. Rotation about the axis carries no inertia, so
    the bar has no orientation (`axes` is not defined); use `RigidBody3D` where it matters.
    """

    mass: Float[Array, ""]
    length: Float[Array, ""]
    com: Float[Array, " 1"]
    inertia: Float[Array, ""]
    ncoords: ClassVar[int] = 6
    dim: ClassVar[int] = 3
    nconstraints: ClassVar[int] = 1
    point_size: ClassVar[int] = 1
    npoint: ClassVar[int] = 1

    def __init__(self, mass, length, com=None, inertia=None):
        """**Arguments:** `mass` (kg), `length` (m), `com` distance of the centre of
        mass from $r_i$ along the axis (default `L/2`), `inertia` transverse moment about
        the centre of mass (default $m L^2/12$)."""
        self.mass, self.length, com, self.inertia = _bar_parameters(
            "RigidBar3D", mass, length, com, inertia, lambda L: 0.5 * L
        )
        self.com = jnp.reshape(com, (1,))
        check_finite("RigidBar3D", "com", self.com)

    def _second_moment(self):
        return jnp.reshape(self.inertia, (1, 1))

    def position(self, q, point):
        return q[0:3] + point[0] * (q[3:6] - q[0:3]) / self.length

    def constraints(self, q):
        d = q[3:6] - q[0:3]
        return jnp.atleast_1d((d @ d - self.length**2) / (2 * self.length))

    def axes(self, q):
        raise NotImplementedError("RigidBar3D has no orientation about its axis; use RigidBody3D")


class RigidBody3D(AbstractNaturalBody):
    r"""Spatial rigid body: a basic point and three unit vectors, $q_b = [r_0, u, v, w]$.

    A body point $p$ is at $r = r_0 + p_x u + p_y v + p_z w$. Six internal constraints
    keep $(u, v, w)$ orthonormal (three unit lengths, three right angles).
    """

    mass: Float[Array, ""]
    com: Float[Array, " 3"]
    inertia: Float[Array, "3 3"]
    ncoords: ClassVar[int] = 12
    dim: ClassVar[int] = 3
    nconstraints: ClassVar[int] = 6
    point_size: ClassVar[int] = 3
    npoint: ClassVar[int] = 3

    def __init__(self, mass, inertia, com=(0.0, 0.0, 0.0)):
        """**Arguments:** `mass` (kg), `inertia` 3x3 inertia tensor about the centre of
        mass in body axes (kg m², symmetric positive definite), `com` centre of mass
        relative to $r_0$ in body axes (m)."""
        self.mass = jnp.asarray(mass, float)
        inertia = jnp.asarray(inertia, float)
        self.inertia = jnp.diag(inertia) if inertia.shape == (3,) else inertia
        self.com = jnp.asarray(com, float)
        check_shape("RigidBody3D", "mass", self.mass, ())
        check_shape("RigidBody3D", "inertia", self.inertia, (3, 3))
        check_shape("RigidBody3D", "com", self.com, (3,))
        check_positive("RigidBody3D", "mass", self.mass)
        check_finite("RigidBody3D", "com", self.com)
        check_inertia_tensor("RigidBody3D", "inertia", self.inertia)

    def _second_moment(self):
        return _second_moment_from_inertia(self.inertia)

    def position(self, q, point):
        return q[0:3] + point[0] * q[3:6] + point[1] * q[6:9] + point[2] * q[9:12]

    def constraints(self, q):
        u, v, w = q[3:6], q[6:9], q[9:12]
        return jnp.stack([(u @ u - 1) / 2, (v @ v - 1) / 2, (w @ w - 1) / 2, u @ v, v @ w, w @ u])

    def axes(self, q):
        return jnp.stack([q[3:6], q[6:9], q[9:12]], axis=1)


class TriangularPlate(AbstractNaturalBody):
    r"""Thin rigid plate on three basic points, $q_b = [r_1, r_2, r_3]$ (seed 001 eq. 24-30).

    The plate frame is planar: `vertices` are the in-plane frame coordinates of the
    three points. An in-plane point $p$ with $p - P_1 = a (P_2 - P_1) + b (P_3 - P_1)$
    sits at $r = r_1 + a (r_2 - r_1) + b (r_3 - r_1)$. Three distance constraints keep
    the triangle rigid. Out-of-plane mass distribution is neglected (thin plate).
    """

    mass: Float[Array, ""]
    vertices: Float[Array, "3 2"]
    com: Float[Array, " 2"]
    inertia: Float[Array, "3 3"]
    ncoords: ClassVar[int] = 9
    dim: ClassVar[int] = 3
    nconstraints: ClassVar[int] = 3
    point_size: ClassVar[int] = 2
    npoint: ClassVar[int] = 2

    def __init__(self, mass, vertices, com=None, inertia=None):
        """**Arguments:** `mass` (kg); `vertices` (3, 2) in-plane frame coordinates of
        the basic points (m); `com` in-plane centre of mass (default the centroid);
        `inertia` 3x3 tensor about the centre of mass in plate axes, z normal (default
        a uniform triangular lamina)."""
        self.mass = jnp.asarray(mass, float)
        self.vertices = jnp.asarray(vertices, float)
        check_shape("TriangularPlate", "vertices", self.vertices, (3, 2))
        check_positive("TriangularPlate", "mass", self.mass)
        centroid = jnp.mean(self.vertices, axis=0)
        self.com = jnp.asarray(centroid if com is None else com, float)
        check_shape("TriangularPlate", "com", self.com, (2,))
        check_finite("TriangularPlate", "com", self.com)
        if inertia is None:
            d = self.vertices - centroid[None]  # uniform lamina: J = m/12 sum d_i d_i^T
            j2 = self.mass / 12.0 * d.T @ d
            inertia = jnp.trace(j2) * jnp.eye(3) - jnp.zeros((3, 3)).at[:2, :2].set(j2)
        self.inertia = jnp.asarray(inertia, float)
        check_shape("TriangularPlate", "inertia", self.inertia, (3, 3))
        check_finite("TriangularPlate", "inertia", self.inertia)
        e = self.vertices[1:] - self.vertices[0][None]
        check_positive("TriangularPlate", "vertex triangle area", jnp.abs(jnp.linalg.det(e)))

    def _second_moment(self):
        return _second_moment_from_inertia(self.inertia)[:2, :2]

    def _weights(self, point):
        e = (self.vertices[1:] - self.vertices[0][None]).T
        return jnp.linalg.solve(e, point - self.vertices[0])

    def position(self, q, point):
        a, b = self._weights(point)
        r1, r2, r3 = q[0:3], q[3:6], q[6:9]
        return r1 + a * (r2 - r1) + b * (r3 - r1)

    def constraints(self, q):
        r = jnp.reshape(q, (3, 3))
        pairs = ((0, 1), (1, 2), (2, 0))
        rows = []
        for i, j in pairs:
            d = r[j] - r[i]
            dist = jnp.linalg.norm(self.vertices[j] - self.vertices[i])
            rows.append((d @ d - dist**2) / (2 * dist))
        return jnp.stack(rows)

    def axes(self, q):
        p0 = self.vertices[0]
        o = self.position(q, p0)
        ex = self.position(q, p0 + jnp.array([1.0, 0.0])) - o
        ey = self.position(q, p0 + jnp.array([0.0, 1.0])) - o
        return jnp.stack([ex, ey, jnp.cross(ex, ey)], axis=1)


class RigidBody2D(AbstractBody):
    r"""Planar rigid body in centroidal coordinates $q_b = (x, y, \varphi)$.

    $(x, y)$ is the centre of mass; a body point $p$ sits at $r = (x, y) + A(\varphi) p$.
    The mass matrix $\operatorname{diag}(m, m, I)$ is constant.
    """

    mass: Float[Array, ""]
    inertia: Float[Array, ""]
    ncoords: ClassVar[int] = 3
    dim: ClassVar[int] = 2
    nconstraints: ClassVar[int] = 0
    point_size: ClassVar[int] = 2
    constant_mass: ClassVar[bool] = True

    def __init__(self, mass, inertia):
        """**Arguments:** `mass` (kg, > 0), `inertia` about the centre of mass (kg m², > 0)."""
        self.mass = jnp.asarray(mass, float)
        self.inertia = jnp.asarray(inertia, float)
        for name in ("mass", "inertia"):
            check_shape("RigidBody2D", name, getattr(self, name), ())
            check_positive("RigidBody2D", name, getattr(self, name))

    def mass_matrix(self, q):
        return jnp.diag(jnp.stack([self.mass, self.mass, self.inertia]))

    def force(self, q, v, t):
        return jnp.zeros_like(q)

    def constraints(self, q):
        return jnp.zeros((0,), q.dtype)

    def axes(self, q):
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        return jnp.array([[c, -s], [s, c]])

    def position(self, q, point):
        return q[0:2] + self.axes(q) @ point

    def total_mass(self) -> Scalar:
        return self.mass

    def center_of_mass(self, q):
        return q[0:2]

    def potential_energy(self, q):
        return jnp.zeros((), q.dtype)
