r"""Point-versus-surface contact geometry: gaps and their Jacobians by autodiff (seed 004 §1).

A contact point $P$ is a material point of one body, located by the body's own
`position(q_b, point)`, so any planar body works (modal hub-beam, ANCF beam, rigid
body, particle). The obstacle is a rigid, fixed line through `surface_point` $r_0$ with
unit outward normal $n$; the free side is $n\cdot(r - r_0) > 0$. The tangent is
$\tau = R_{90}\,n$ ($n$ turned by +90°). The normal and tangential gaps (seed eq. 2-3)
$$g_N(q) = n\cdot(r_P(q) - r_0), \qquad g_T(q) = \tau\cdot(r_P(q) - r_0)$$
and their Jacobians $J_N = \partial g_N/\partial q$, $J_T = \partial g_T/\partial q$
(seed eq. 5-6 and 9-12, written there term by term for the modal beam) come from
`jax.jacfwd`. The velocity-independent part of $\ddot g$,
$\gamma_g = -(J\dot q)_q\,\dot q$, comes from nested JVPs.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_shape, is_concrete
from .._custom_types import Scalar
from ..bodies.ancf2d import AncfBeam2D
from ..bodies.modal_beam import ModalHubBeam
from ..bodies.rigid import PointMass

_R90 = np.array([[0.0, -1.0], [1.0, 0.0]])


class PointSurfaceContact(eqx.Module):
    r"""A unilateral frictional contact between a body point and a fixed rigid line.

    Multipliers: $\lambda_N \ge 0$ is the compressive normal force, $\lambda_T$ the
    tangential force along $\tau$; the generalized contact force is
    $J_N^T\lambda_N + J_T^T\lambda_T$. Coulomb's law: $|\lambda_T| \le \mu\lambda_N$
    in stick, $\lambda_T = -\mu\lambda_N\,\mathrm{sign}(\dot g_T)$ in slip.
    """

    body: int = eqx.field(static=True)
    point: Float[Array, " p"]
    surface_point: Float[Array, " 2"]
    normal: Float[Array, " 2"]
    mu: Float[Array, ""]
    restitution: Float[Array, ""]

    def __init__(self, body, point, surface_point, normal, mu=0.0, restitution=0.0):
        r"""**Arguments:**

        - `body`: index of the body that carries the contact point (static int).
        - `point`: body-frame coordinates of $P$ as the body's `position` takes them
          (arc length `(s,)` on beams, `(x, y)` on rigid bodies, `(0, 0)` on a particle).
        - `surface_point`: a point $r_0$ of the line (m).
        - `normal`: outward normal of the line, pointing into the free side; any
          non-zero length (normalized here).
        - `mu`: Coulomb friction coefficient, $\ge 0$.
        - `restitution`: Newton's normal restitution coefficient $e \in [0, 1]$ of the
          impact law (default 0, perfectly plastic, as in seed 004).
        """
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)) or body < 0:
            raise ValueError(f"PointSurfaceContact: `body` must be a body index >= 0, got {body!r}.")
        self.body = int(body)
        self.point = jnp.asarray(point, float)
        if self.point.ndim != 1:
            raise ValueError(f"PointSurfaceContact: `point` must be a 1-D array, got shape {self.point.shape}.")
        self.surface_point = jnp.asarray(surface_point, float)
        normal = jnp.asarray(normal, float)
        check_shape("PointSurfaceContact", "surface_point", self.surface_point, (2,))
        check_shape("PointSurfaceContact", "normal", normal, (2,))
        if is_concrete(normal):
            length = float(np.linalg.norm(np.asarray(normal)))
            if not (np.isfinite(length) and length > 0):
                raise ValueError(
                    f"PointSurfaceContact: `normal` must be a non-zero finite vector, got {np.asarray(normal)}; "
                    "give the outward normal of the surface, e.g. (0, 1) for the floor y = 0."
                )
        self.normal = normal / jnp.sqrt(normal @ normal)
        self.mu = jnp.asarray(mu, float)
        self.restitution = jnp.asarray(restitution, float)
        for name, x, hi in (("mu", self.mu, np.inf), ("restitution", self.restitution, 1.0)):
            check_shape("PointSurfaceContact", name, x, ())
            if is_concrete(x) and not (0.0 <= float(x) <= hi):
                raise ValueError(f"PointSurfaceContact: `{name}` must lie in [0, {hi}], got {float(x)}.")

    @property
    def tangent(self) -> Float[Array, " 2"]:
        r"""Unit tangent $\tau = R_{90}\,n$."""
        return jnp.asarray(_R90) @ self.normal

    def check(self, system) -> None:
        """Raise `ValueError` unless the contact point exists on a planar body of `system`.

        Beams take an arc length `(s,)` with $0 \\le s \\le L$; a particle only its own
        position `(0, 0)`; other planar bodies a frame point `(x, y)`.
        """
        nb = len(system.bodies)
        if not 0 <= self.body < nb:
            raise ValueError(f"PointSurfaceContact: refers to body {self.body}; the system has {nb} bodies.")
        body = system.bodies[self.body]
        if body.dim != 2:
            raise NotImplementedError(
                f"PointSurfaceContact: body {self.body} is {body.dim}D; point-surface contact is planar (2D) only."
            )
        name = type(body).__name__
        p = np.asarray(self.point) if is_concrete(self.point) else None
        if isinstance(body, (ModalHubBeam, AncfBeam2D)):
            check_shape("PointSurfaceContact", f"point (arc length on the {name})", self.point, (1,))
            length = float(body.length) if is_concrete(body.length) else np.inf
            if p is not None and not 0.0 <= float(p[0]) <= length:
                raise ValueError(
                    f"PointSurfaceContact: contact point at arc length {float(p[0])} m lies outside the "
                    f"{name} (length {length} m); give 0 <= s <= L."
                )
            return
        check_shape("PointSurfaceContact", f"point (frame point of the {name})", self.point, (2,))
        if p is not None and not np.all(np.isfinite(p)):
            raise ValueError(f"PointSurfaceContact: contact point must be finite, got {p}.")
        if isinstance(body, PointMass) and p is not None and np.any(p != 0):
            raise ValueError(f"PointSurfaceContact: a PointMass has no extent; its only point is (0, 0), got {p}.")

    def position(self, system, q: Float[Array, " nq"]) -> Float[Array, " 2"]:
        """World position of the contact point."""
        return system.bodies[self.body].position(system._part(q, self.body), self.point)

    def gaps(self, system, q: Float[Array, " nq"]) -> Float[Array, " 2"]:
        r"""$[g_N, g_T]$ (seed eq. 2-3), m."""
        d = self.position(system, q) - self.surface_point
        return jnp.stack([self.normal @ d, self.tangent @ d])

    def normal_gap(self, system, q: Float[Array, " nq"]) -> Scalar:
        r"""$g_N$ (m); positive on the free side."""
        return self.gaps(system, q)[0]

    def jacobian(self, system, q: Float[Array, " nq"]) -> Float[Array, "2 nq"]:
        r"""$[J_N; J_T] = \partial [g_N, g_T] / \partial q$ by forward-mode autodiff."""
        return jax.jacfwd(lambda qq: self.gaps(system, qq))(q)

    def gap_velocity(self, system, q, v) -> Float[Array, " 2"]:
        r"""$[\dot g_N, \dot g_T] = J\dot q$."""
        return jax.jvp(lambda qq: self.gaps(system, qq), (q,), (v,))[1]

    def gap_gamma(self, system, q, v) -> Float[Array, " 2"]:
        r"""$\gamma_g = -(J\dot q)_q\,\dot q$, so that $\ddot g = J\ddot q - \gamma_g$."""
        return -jax.jvp(lambda qq: self.gap_velocity(system, qq, v), (q,), (v,))[1]
