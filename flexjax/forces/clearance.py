r"""Planar revolute joint with clearance (seed 002 §1, eq. 1-14).

A bearing of radius $R_i$ on body $i$ (or on the ground) holds a journal of radius
$R_j \le R_i$ on body $j$; the radial clearance is $c = R_i - R_j$. With the centres
$r_i$, $r_j$ (eq. 1-3) $e = r_j - r_i$, $n = e/|e|$ and the penetration $\delta = |e| - c$
(eq. 4), the journal flies freely while $\delta \le 0$. In contact:

- normal force, hybrid Lankarani-Nikravesh / Winkler model of Bai & Zhao (eq. 9-11):
  $F_N = K_n\delta^n + D_{mod}\dot\delta$, $n = 1.5$,
  $K_n = \tfrac18\pi E^*\sqrt{2\delta(3c + 2\delta)^2/(c + \delta)^3}$,
  $D_{mod} = \tfrac34 K_n (1 - c_e^2)\,e^{2(1 - c_e)}\,\delta^n / \dot\delta^{(-)}$,
  clipped at 0 (contact never pulls); $\dot\delta^{(-)}$ is the approach velocity at
  the start of the contact, the element's discrete state;
- Ambrósio friction (eq. 13-14): $F_T = -c_f c_d(|v_T|) F_N\,\mathrm{sign}(v_T)$ with
  $c_d$ rising linearly from 0 at $v_0$ to 1 at $v_1$;
- $v_N$, $v_T$: relative velocity of the contact points $Q_k = r_k + R_k n$ (eq. 5-8)
  along $n$ and $t = R_{90} n$, including the bodies' rotation $\dot\theta_k$.

Eq. 10 as printed is not dimensionally homogeneous: $K_n\delta^{1.5}$ is in Pa m^{1.5}.
flexjax evaluates it in SI units, as the paper does (the formula is an empirical fit
for steel journals in mm-sized clearances).

The force is $C^1$ at first contact ($F_N \propto \delta^2$ for $\delta \ll c$), which
the implicit solver integrates without event handling as long as the step resolves the
contact (`contact_time`); the generalized forces follow from virtual power,
$Q = -(F_N\,\partial v_N/\partial\dot q + F_T\,\partial v_T/\partial\dot q)$.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_shape, is_concrete, safe_norm
from ..bodies.ancf2d import AncfBeam2D
from ..bodies.base import planar_angle
from ..bodies.rigid import PointMass
from .base import AbstractStatefulForce

_R90 = np.array([[0.0, -1.0], [1.0, 0.0]])
_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(12)


def effective_modulus(youngs_i, poisson_i, youngs_j, poisson_j):
    r"""Composite modulus of eq. 12, $1/E^* = (1-\nu_i^2)/E_i + (1-\nu_j^2)/E_j$ (Pa)."""
    return 1.0 / ((1 - poisson_i**2) / youngs_i + (1 - poisson_j**2) / youngs_j)


def _angle(body, q, point):
    """Orientation of `body` at `point`: the slope angle on a beam, the axes otherwise
    (a particle does not turn)."""
    if isinstance(body, PointMass):
        return jnp.zeros((), q.dtype)
    if isinstance(body, AncfBeam2D):
        d = body.slope(q, point)
        return jnp.arctan2(d[1], d[0])
    return planar_angle(body.axes(q))


class ClearanceJoint(AbstractStatefulForce):
    r"""Revolute joint with radial clearance between a bearing and a journal.

    **Arguments:**

    - `body_i`, `point_i`: the bearing's body and centre (body-frame point; for an
      `AncfBeam2D` the arc length `(s,)`); `body_i=None` puts the bearing on the
      ground at the world point `point_i`.
    - `body_j`, `point_j`: the journal's body and centre.
    - `journal_radius` $R_j$ (m, > 0) and either `clearance` $c \ge 0$ (m) or
      `bearing_radius` $R_i \ge R_j$ (m).
    - `modulus`: composite modulus $E^*$ (Pa, eq. 12; `effective_modulus` builds it).
      Default: two steel parts, $E = 207$ GPa, $\nu = 0.3$.
    - `restitution` $c_e \in (0, 1]$ (eq. 11), `friction` $c_f \ge 0$ (eq. 13),
      `v0` < `v1` (m/s, eq. 14), `exponent` $n$ (1.5 for metals).
    - `min_impact_velocity` (m/s): floor of $\dot\delta^{(-)}$ in eq. 11, which
      otherwise makes the damping unbounded for contacts that start at rest.

    All numbers are leaves (differentiable, batchable). The state `state` is the
    impact velocity $\dot\delta^{(-)}$ of the current contact.

    **Raises:** `ValueError` for a negative clearance (a bearing smaller than its
    journal), non-positive radii or modulus, $c_e \notin (0, 1]$, $c_f < 0$, or
    $v_1 \le v_0$.
    """

    body_i: int | None = eqx.field(static=True)
    point_i: Float[Array, " p"]
    body_j: int = eqx.field(static=True)
    point_j: Float[Array, " p"]
    journal_radius: Float[Array, ""]
    clearance: Float[Array, ""]
    modulus: Float[Array, ""]
    restitution: Float[Array, ""]
    friction: Float[Array, ""]
    v0: Float[Array, ""]
    v1: Float[Array, ""]
    exponent: Float[Array, ""]
    min_impact_velocity: Float[Array, ""]
    state: Float[Array, ""]
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 2

    def __init__(
        self,
        body_i,
        point_i,
        body_j,
        point_j,
        *,
        journal_radius,
        clearance=None,
        bearing_radius=None,
        modulus=None,
        restitution=0.9,
        friction=0.0,
        v0=1e-4,
        v1=1e-3,
        exponent=1.5,
        min_impact_velocity=1e-3,
    ):
        if (clearance is None) == (bearing_radius is None):
            raise ValueError("ClearanceJoint: give exactly one of `clearance` and `bearing_radius`.")
        if body_j is None or body_j == body_i:
            raise ValueError(f"ClearanceJoint: the journal needs its own body, got body_i={body_i}, body_j={body_j}.")
        self.body_i, self.body_j = body_i, body_j
        self.point_i, self.point_j = jnp.asarray(point_i, float), jnp.asarray(point_j, float)
        if body_i is None:
            check_shape("ClearanceJoint", "point_i (a ground point)", self.point_i, (2,))
        as_leaf = lambda x: jnp.asarray(x, float)
        self.journal_radius = as_leaf(journal_radius)
        if clearance is None:
            bearing = as_leaf(bearing_radius)
            if (
                is_concrete(bearing)
                and is_concrete(self.journal_radius)
                and float(bearing) < float(self.journal_radius)
            ):
                raise ValueError(
                    f"ClearanceJoint: the bearing radius {float(bearing)} m is smaller than the journal radius "
                    f"{float(self.journal_radius)} m; the clearance c = R_i - R_j must be >= 0."
                )
            clearance = bearing - self.journal_radius
        self.clearance = as_leaf(clearance)
        self.modulus = as_leaf(effective_modulus(207e9, 0.3, 207e9, 0.3) if modulus is None else modulus)
        self.restitution, self.friction = as_leaf(restitution), as_leaf(friction)
        self.v0, self.v1, self.exponent = as_leaf(v0), as_leaf(v1), as_leaf(exponent)
        self.min_impact_velocity = as_leaf(min_impact_velocity)
        self.state = jnp.zeros(())
        self.bodies = (body_j,) if body_i is None else (body_i, body_j)
        self._check_values()

    def _check_values(self):
        names = (
            "journal_radius",
            "clearance",
            "modulus",
            "restitution",
            "friction",
            "v0",
            "v1",
            "exponent",
            "min_impact_velocity",
        )
        for name in names:
            check_shape("ClearanceJoint", name, getattr(self, name), ())
        if not all(is_concrete(getattr(self, n)) for n in names):
            return  # traced values (inside jit/vmap): checked when built from numbers
        f = {n: float(getattr(self, n)) for n in names}
        rules = (
            (f["clearance"] >= 0, f"the clearance must be >= 0 m, got {f['clearance']}"),
            (f["journal_radius"] > 0, f"`journal_radius` must be > 0 m, got {f['journal_radius']}"),
            (f["modulus"] > 0, f"`modulus` must be > 0 Pa, got {f['modulus']}"),
            (0 < f["restitution"] <= 1, f"`restitution` must lie in (0, 1], got {f['restitution']}"),
            (f["friction"] >= 0, f"`friction` must be >= 0, got {f['friction']}"),
            (0 <= f["v0"] < f["v1"], f"need 0 <= v0 < v1 (m/s), got v0={f['v0']}, v1={f['v1']}"),
            (f["exponent"] > 0, f"`exponent` must be > 0, got {f['exponent']}"),
            (f["min_impact_velocity"] > 0, f"`min_impact_velocity` must be > 0 m/s, got {f['min_impact_velocity']}"),
        )
        for ok, msg in rules:
            if not ok:
                raise ValueError(f"ClearanceJoint: {msg}.")

    # -- kinematics ----------------------------------------------------------------
    def _sides(self, bodies):
        """(body, point) of bearing and journal; the bearing body is None on ground."""
        return ((None if self.body_i is None else bodies[0]), bodies[-1])

    def _centres(self, bodies, qs):
        bearing, journal = self._sides(bodies)
        ri = self.point_i if bearing is None else bearing.position(qs[0], self.point_i)
        return ri, journal.position(qs[-1], self.point_j)

    def eccentricity(self, bodies, qs) -> Float[Array, " 2"]:
        """$e = r_j - r_i$ (eq. 1), journal centre relative to the bearing centre."""
        ri, rj = self._centres(bodies, qs)
        return rj - ri

    def penetration(self, bodies, qs):
        r"""$\delta = |e| - c$ (eq. 4); contact when positive."""
        return safe_norm(self.eccentricity(bodies, qs)) - self.clearance

    def _relative_velocity(self, bodies, qs, vs, n):
        r"""$(v_N, v_T)$ of eq. 7-8 for fixed normal $n$; linear in the velocities."""
        bearing, journal = self._sides(bodies)
        t = jnp.asarray(_R90) @ n

        def point_velocity(body, q, v, point, radius):
            r_dot = jax.jvp(lambda x: body.position(x, point), (q,), (v,))[1]
            w = jax.jvp(lambda x: _angle(body, x, point), (q,), (v,))[1]
            return r_dot + radius * w * t  # Q_k = r_k + R_k n on a body turning at w

        vj = point_velocity(journal, qs[-1], vs[-1], self.point_j, self.journal_radius)
        vi = (
            0.0
            if bearing is None
            else point_velocity(bearing, qs[0], vs[0], self.point_i, self.journal_radius + self.clearance)
        )
        dv = vj - vi
        return dv @ n, dv @ t

    # -- contact law ---------------------------------------------------------------
    def _stiffness(self, delta):
        """$K_n$ of eq. 10 at penetration `delta` > 0."""
        c = self.clearance
        return jnp.pi * self.modulus / 8 * jnp.sqrt(2 * delta) * (3 * c + 2 * delta) / (c + delta) ** 1.5

    def contact_forces(self, bodies, qs, vs):
        r"""Normal and tangential force magnitudes $(F_N, F_T)$ (N, eq. 9-14), the
        normal $n$ and the relative velocities $(v_N, v_T)$."""
        e = self.eccentricity(bodies, qs)
        dist = safe_norm(e)
        n = e / jnp.where(dist > 0, dist, 1.0)
        delta = dist - self.clearance
        v_n, v_t = self._relative_velocity(bodies, qs, vs, n)
        touching = delta > 0
        d = jnp.where(touching, delta, 1.0)  # keeps sqrt and powers finite when apart
        K = self._stiffness(d)
        ce = self.restitution
        v_impact = jnp.maximum(self.state, self.min_impact_velocity)
        damping = 0.75 * K * (1 - ce**2) * jnp.exp(2 * (1 - ce)) * d**self.exponent / v_impact
        F_n = jnp.where(touching, jnp.maximum(K * d**self.exponent + damping * v_n, 0.0), 0.0)
        speed = jnp.abs(v_t)
        c_d = jnp.clip((speed - self.v0) / (self.v1 - self.v0), 0.0, 1.0)  # eq. 14
        F_t = self.friction * c_d * F_n * jnp.sign(v_t)  # c_d = 0 near v_T = 0: continuous
        return F_n, F_t, n, (v_n, v_t)

    def force(self, bodies, qs, vs, t):
        F_n, F_t, n, _ = self.contact_forces(bodies, qs, vs)
        # virtual power: the forces act along the current n and t
        _, pullback = jax.vjp(lambda *v: self._relative_velocity(bodies, qs, v, n), *vs)
        return tuple(-g for g in pullback((F_n, F_t)))

    def potential_energy(self, bodies, qs, t):
        r"""Elastic energy $\int_0^\delta K_n(s)\,s^n\,ds$ (Gauss-Legendre, 12 points)."""
        delta = self.penetration(bodies, qs)
        return self._elastic(jnp.where(delta > 0, delta, 0.0))

    def _elastic(self, d):
        s = 0.5 * d * (jnp.asarray(_GAUSS_X) + 1)
        s_safe = jnp.where(s > 0, s, 1.0)
        integrand = jnp.where(s > 0, self._stiffness(s_safe) * s_safe**self.exponent, 0.0)
        return 0.5 * d * (jnp.asarray(_GAUSS_W) @ integrand)

    def advance_state(self, bodies, qs, vs, t, h):
        r"""Keep $\dot\delta^{(-)}$ through a contact; out of contact track the approach
        velocity $\dot\delta$, so the value at the last free step starts the next one."""
        e = self.eccentricity(bodies, qs)
        delta = safe_norm(e) - self.clearance
        rate = jax.jvp(lambda *q: safe_norm(self.eccentricity(bodies, q)), tuple(qs), tuple(vs))[1]
        keep = (delta > 0) & (self.state > 0)
        return jnp.where(keep, self.state, jnp.maximum(rate, self.min_impact_velocity))

    @eqx.filter_jit
    def contact_time(self, mass, impact_velocity):
        r"""Duration (s) of a frictionless, undamped impact of a journal of effective
        `mass` (kg) at `impact_velocity` (m/s): $T = 2\int_0^{\delta_m} d\delta/\dot\delta$
        with $\tfrac12 m\dot\delta^2 = \tfrac12 m v^2 - V(\delta)$. Choose the step
        $h \lesssim T/20$ so that impacts are resolved, not stepped over."""
        kinetic = 0.5 * jnp.asarray(mass, float) * jnp.asarray(impact_velocity, float) ** 2

        def bisect(_, bounds):  # peak penetration V(delta_m) = kinetic
            lo, hi = bounds
            mid = 0.5 * (lo + hi)
            big = self._elastic(mid) > kinetic
            return jnp.where(big, lo, mid), jnp.where(big, mid, hi)

        lo, hi = jax.lax.fori_loop(0, 200, bisect, (jnp.zeros(()), jnp.asarray(1e-2)))
        dm = 0.5 * (lo + hi)
        # delta = dm (1 - u^2) removes the 1/sqrt singularity at the turning point
        u = 0.5 * (jnp.asarray(_GAUSS_X) + 1)
        rate = jnp.sqrt(2 * (kinetic - jax.vmap(self._elastic)(dm * (1 - u**2))) / mass)
        return 2 * 0.5 * (jnp.asarray(_GAUSS_W) @ (2 * dm * u / rate))
