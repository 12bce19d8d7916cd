r"""The 3-RRPaR spatial parallel robot with flexible parallelogram rods (seed 001 §2-3).

**Structure (seed §2.1, Fig. 4-5).** A fixed base and a moving platform are joined by
three identical chains. Chain $i$ (at the azimuth $\varphi_i = 0°, 120°, 240°$, radial
unit vector $e_i$, tangential unit vector $s_i = \hat z \times e_i$):

1. actuated revolute joint at the base point $B_i = R_b e_i$, axis $s_i$;
2. rigid active arm of length $L_a$ (NCF `RigidBody3D`; the seed uses centroidal
   coordinates, eq. 28) to the elbow $E_i$;
3. revolute joint at the elbow, axis $s_i$, carrying the upper short bar (length $2d$,
   along $s_i$, centred on the elbow);
4. a parallelogram: two rods of length $L_r$ (flexible `AncfBeam3D`, or rigid
   `RigidBody3D` in the reference mechanism) hinged at the bar ends by revolute joints
   whose axis is the normal of the parallelogram plane (seed eq. 20-23), and the lower
   short bar (length $2d$);
5. revolute joint, axis $s_i$, between the centre of the lower bar and the platform
   point $C_i = P + R_p e_i$ (the platform is a `RigidBody3D`, seed eq. 24-25).

The upper bar is parallel to $s_i$ (it turns about its own axis), the parallelogram
keeps the lower bar parallel to it, and the last hinge fixes the platform's rotation
about two axes per chain: the platform translates (3 DOF, seed §2.1). Seed eq. 15 counts
17 links, 21 joints and $s = 12$ redundant constraints; in the natural-coordinate model
the rigid mechanism's $\Phi_q$ is rank deficient (see `docs/parallel_robot.md` for the
ranks), whereas the flexible rods absorb the redundancy (each rod node carries its own
gradient coordinates) and $\Phi_q$ has full rank.

**Geometry and materials** (the seed's Tables 1-4 are missing; a Delta-type design,
z up, gravity $-9.81\hat z$): see `GEOMETRY`, `MATERIALS` and the docs table.

**Inverse kinematics** (drives seed eq. 26). With $D = C_i - B_i = P + (R_p - R_b)e_i$
in chain coordinates $x = D\cdot e_i$, $y = D\cdot s_i$, $z = D\cdot\hat z$ and the arm
angle $\theta_i$ below the horizontal, $E_i - B_i = L_a(\cos\theta_i e_i - \sin\theta_i \hat z)$;
the rod-length condition $|D - (E_i - B_i)| = L_r$ reads
$x\cos\theta - z\sin\theta = K$, $K = (x^2 + y^2 + z^2 + L_a^2 - L_r^2)/(2L_a)$, i.e.
$\rho\cos(\theta + \delta) = K$ with $\rho = \sqrt{x^2 + z^2}$, $\delta = \operatorname{atan2}(z, x)$:
$\theta = -\arccos(K/\rho) - \delta$ (the elbow-out branch). Reachable when $|K| < \rho$;
`check_workspace` demands $|K|/\rho \le 0.98$ (away from the arm-rod alignment
singularity) and $|y| \le 0.8 L_r$ (the parallelogram far from folding).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import Scalar
from .._structural import structural_jit
from ..bodies.ancf3d import AncfBeam3D, straight_beam_coordinates_3d
from ..bodies.rigid import RigidBody3D
from ..bodies.sections import CircularSection
from ..forces.gravity import Gravity
from ..joints.ancf3d import AncfRevolute3D
from ..joints.driving import DrivingConstraint
from ..joints.revolute import RevoluteJoint3D
from ..solvers.generalized_alpha import GeneralizedAlpha
from ..solvers.simulate import simulate
from ..solvers.statics import solve_static
from ..system import System

# -- design data (SI units) ------------------------------------------------------------
GEOMETRY = dict(
    base_radius=0.20,  # R_b: base hinge points from the vertical axis
    platform_radius=0.05,  # R_p: platform hinge points from the platform centre
    arm_length=0.25,  # L_a: base hinge to elbow
    rod_length=0.50,  # L_r: parallelogram rods (hinge to hinge)
    bar_half_length=0.04,  # d: rod spacing 2d = 80 mm along the short bars
    rod_radius=0.004,  # solid circular rods, 8 mm diameter
)
CHAIN_AZIMUTHS = (0.0, 2 * np.pi / 3, 4 * np.pi / 3)
MATERIALS = dict(
    rod_density=4430.0,  # titanium alloy Ti-6Al-4V (E = 116 GPa is its modulus)
    rod_youngs=116e9,
    rod_poisson=0.34,  # Ti-6Al-4V; the split ANCF formulation has no Poisson locking
    arm_mass=0.40,  # aluminium box arm
    bar_mass=0.05,  # steel short bars
    platform_mass=0.50,  # aluminium plate with tool flange
)
G = 9.81
# horizontal circle of the platform centre; one revolution in PERIOD seconds
CIRCLE_CENTRE = (0.0, 0.0, -0.40)
CIRCLE_RADIUS = 0.10
PERIOD = 1.0
BODIES_PER_CHAIN = 5  # arm, upper bar, rod A, rod B, lower bar; the platform is last
K_MARGIN = 0.98
TANGENTIAL_MARGIN = 0.8


def _frames(azimuth):
    """Radial and tangential unit vectors $e_i$, $s_i$ of a chain."""
    c, s = np.cos(azimuth), np.sin(azimuth)
    return jnp.array([c, s, 0.0]), jnp.array([-s, c, 0.0])


class PlatformCirclePath(eqx.Module):
    r"""Platform centre on a horizontal circle, $P(t) = c + r(\cos\varphi, \sin\varphi, 0)$
    (seed eq. 36, whose form is missing), with the cycloidal rest-to-rest angle
    $\varphi = 2\pi(\tau - \sin(2\pi\tau)/2\pi)$, $\tau = t/T$: zero velocity and
    acceleration at $t = 0$ and $t = T$, peak speed $4\pi r/T$. After $T$ it repeats.

    **Arguments:** `centre` (3,), `radius` (m), `period` $T$ (s); leaves.
    """

    centre: Float[Array, " 3"] = eqx.field(converter=lambda x: jnp.asarray(x, float), default=CIRCLE_CENTRE)
    radius: Float[Array, ""] = eqx.field(converter=lambda x: jnp.asarray(x, float), default=CIRCLE_RADIUS)
    period: Float[Array, ""] = eqx.field(converter=lambda x: jnp.asarray(x, float), default=PERIOD)

    def angle(self, t):
        tau = t / self.period
        return 2 * jnp.pi * tau - jnp.sin(2 * jnp.pi * tau)

    def __call__(self, t):
        phi = self.angle(t)
        return self.centre + self.radius * jnp.stack([jnp.cos(phi), jnp.sin(phi), jnp.zeros_like(phi)])

    def velocity(self, t):
        return jax.jvp(self, (t,), (jnp.ones_like(t),))[1]

    def acceleration(self, t):
        return jax.jvp(self.velocity, (t,), (jnp.ones_like(t),))[1]


def _chain_coordinates(platform_centre, frame, geometry):
    """$(x, y, z)$ of $D = C_i - B_i$ in the chain frame $(e_i, s_i, \\hat z)$; `frame`
    is $(e_i, s_i)$ (`_frames`)."""
    e, s = frame
    D = platform_centre + (geometry["platform_radius"] - geometry["base_radius"]) * e
    return D @ e, D @ s, D[2]


def _k_ratio(platform_centre, frame, geometry):
    x, y, z = _chain_coordinates(platform_centre, frame, geometry)
    La, Lr = geometry["arm_length"], geometry["rod_length"]
    K = (x**2 + y**2 + z**2 + La**2 - Lr**2) / (2 * La)
    return K / jnp.sqrt(x**2 + z**2), y / Lr, jnp.arctan2(z, x)


def inverse_kinematics(platform_centre, geometry=GEOMETRY) -> Float[Array, " 3"]:
    r"""Arm angles $\theta_i$ (rad, below the horizontal) that put the platform centre at
    `platform_centre` (elbow-out branch; see the module docstring)."""
    return jnp.stack([_arm_angle(platform_centre, _frames(phi), geometry) for phi in CHAIN_AZIMUTHS])


def _arm_angle(platform_centre, frame, geometry=GEOMETRY):
    r"""$\theta_i$ of the chain with frame `frame` $= (e_i, s_i)$ (`inverse_kinematics`)."""
    ratio, _, delta = _k_ratio(platform_centre, frame, geometry)
    return -jnp.arccos(ratio) - delta


def elbow_positions(theta, geometry=GEOMETRY) -> Float[Array, "3 3"]:
    """Elbow points $E_i$ for arm angles `theta` (rows: chains)."""
    rows = []
    for k, phi in enumerate(CHAIN_AZIMUTHS):
        e, _ = _frames(phi)
        arm = jnp.cos(theta[k]) * e - jnp.sin(theta[k]) * jnp.array([0.0, 0.0, 1.0])
        rows.append(geometry["base_radius"] * e + geometry["arm_length"] * arm)
    return jnp.stack(rows)


def forward_kinematics(theta, guess=CIRCLE_CENTRE, geometry=GEOMETRY, iterations: int = 30) -> Float[Array, " 3"]:
    r"""Platform centre for arm angles `theta`: the point $P$ with
    $|P + R_p e_i - E_i| = L_r$ for the three chains (Newton from `guess`, the branch
    below the base)."""
    E = elbow_positions(theta, geometry)
    offsets = jnp.stack([geometry["platform_radius"] * _frames(phi)[0] for phi in CHAIN_AZIMUTHS])

    def residual(P):
        d = P[None, :] + offsets - E
        return (jnp.sum(d * d, axis=1) - geometry["rod_length"] ** 2) / 2

    P = jnp.asarray(guess, float)
    for _ in range(iterations):
        P = P - jnp.linalg.solve(jax.jacfwd(residual)(P), residual(P))
    return P


@structural_jit  # one small program instead of one per array operation
def _workspace_samples(path: PlatformCirclePath, geometry, samples: int):
    r"""Platform centres at `samples` instants of one period, and per chain the ratio
    $K/\rho$ and the tangential offset $y/L_r$ at each (`_k_ratio`)."""
    points = jax.vmap(path)(jnp.linspace(0.0, path.period, samples))
    ratios = [jax.vmap(lambda P, phi=phi: _k_ratio(P, _frames(phi), geometry)[:2])(points) for phi in CHAIN_AZIMUTHS]
    return points, jnp.stack([jnp.stack(r) for r in ratios])


def check_workspace(path: PlatformCirclePath, geometry=GEOMETRY, samples: int = 721) -> None:
    """Raise `ValueError` when the platform circle leaves the usable workspace
    ($|K|/\\rho \\le 0.98$ and $|y| \\le 0.8 L_r$ in every chain, see the module docstring)."""
    points, ratios = (np.asarray(x) for x in _workspace_samples(path, geometry, samples))
    for k, (ratio, tangential) in enumerate(ratios):
        worst = int(np.argmax(np.abs(np.asarray(ratio))))
        if not np.all(np.abs(np.asarray(ratio)) <= K_MARGIN):
            raise ValueError(
                f"parallel_robot: the platform circle leaves the workspace: chain {k + 1} needs "
                f"|K|/rho = {float(np.abs(ratio[worst])):.3f} (> {K_MARGIN}; 1 is the arm-rod alignment "
                f"singularity, beyond it the point is unreachable) at P = {np.round(points[worst], 4)} m; "
                "use a smaller radius or move the centre towards (0, 0, -0.40) m."
            )
        if not np.all(np.abs(np.asarray(tangential)) <= TANGENTIAL_MARGIN):
            raise ValueError(
                f"parallel_robot: the platform circle leaves the workspace: chain {k + 1}'s parallelogram "
                f"shears beyond |y|/L_r = {TANGENTIAL_MARGIN}; use a smaller radius."
            )


class ArmAngle(eqx.Module):
    r"""Arm angle below the horizontal from the arm's NCF axis $u$:
    $\theta = \operatorname{atan2}(-u\cdot\hat z,\ u\cdot e_i)$ (seed eq. 26's left side)."""

    radial: Float[Array, " 3"]

    def __call__(self, q_b):
        u = q_b[3:6]
        return jnp.arctan2(-u[2], u @ self.radial)


class ActuatorAngle(eqx.Module):
    """Prescribed angle $\\theta_i(t)$ of chain `chain` (0, 1, 2) from the inverse
    kinematics of `path`.

    The chain's frame $(e_i, s_i)$ is held as arrays, not the chain number as a static
    field, so that the three drivers are equal in structure and the system evaluates
    them through one `vmap` (`flexjax._grouping`) instead of tracing each.
    """

    path: PlatformCirclePath
    radial: Float[Array, " 3"]
    tangential: Float[Array, " 3"]

    def __init__(self, path: PlatformCirclePath, chain: int):
        self.path = path
        self.radial, self.tangential = _frames(CHAIN_AZIMUTHS[chain])

    def __call__(self, t):
        return _arm_angle(self.path(t), (self.radial, self.tangential))  # this chain's only


def _slender_inertia(mass, length, radius):
    """Solid cylinder along the body x axis about its centre (kg m²)."""
    axial = 0.5 * mass * radius**2
    transverse = mass * (3 * radius**2 + length**2) / 12
    return jnp.array([axial, transverse, transverse])


def _platform_inertia(mass, geometry):
    # equilateral plate whose edge mid-points are the hinge points (inradius R_p)
    a = 2 * np.sqrt(3) * geometry["platform_radius"]
    return jnp.array([mass * a**2 / 24, mass * a**2 / 24, mass * a**2 / 12])


def body_index(chain: int, part: str) -> int:
    """Body index of `part` ('arm', 'upper', 'rod_a', 'rod_b', 'lower') of chain 0..2,
    or of the platform (`part='platform'`)."""
    if part == "platform":
        return BODIES_PER_CHAIN * len(CHAIN_AZIMUTHS)
    return BODIES_PER_CHAIN * chain + ("arm", "upper", "rod_a", "rod_b", "lower").index(part)


def parallel_robot(
    youngs=MATERIALS["rod_youngs"],
    *,
    rigid: bool = False,
    n_elements: int = 2,
    path: PlatformCirclePath | None = None,
    geometry=GEOMETRY,
    materials=MATERIALS,
    poisson=None,
) -> System:
    r"""The 3-RRPaR robot as a `System`.

    **Arguments:**

    - `youngs`: Young's modulus of the rods (Pa); ignored when `rigid`.
    - `rigid`: rigid rods (`RigidBody3D` with the rods' mass and inertia): the
      reference mechanism; its $\Phi_q$ is rank deficient (use `redundant=True`).
    - `n_elements`: ANCF elements per rod (static).
    - `poisson`: Poisson ratio of the rods (default `materials["rod_poisson"]`, 0.34
      for Ti-6Al-4V; `AncfBeam3D`'s default split formulation does not lock).
    - `path`: the platform trajectory (default `PlatformCirclePath()`); checked by
      `check_workspace` (raises `ValueError` outside the workspace).

    Bodies: chain $i$ owns `5 i + (arm, upper bar, rod A, rod B, lower bar)`; the
    platform is body 15. Joints per chain: base hinge, elbow hinge, the four rod
    hinges, platform hinge, then the driver (seed eq. 17-26).
    """
    path = PlatformCirclePath() if path is None else path
    check_workspace(path, geometry)
    La, Lr, d, rr = (geometry[k] for k in ("arm_length", "rod_length", "bar_half_length", "rod_radius"))
    section = CircularSection(rr)
    rod_mass = materials["rod_density"] * np.pi * rr**2 * Lr
    bodies, joints = [], []
    for k, phi in enumerate(CHAIN_AZIMUTHS):
        e, s = _frames(phi)
        arm, upper, rod_a, rod_b, lower = (body_index(k, p) for p in ("arm", "upper", "rod_a", "rod_b", "lower"))
        bodies.append(
            RigidBody3D(materials["arm_mass"], _slender_inertia(materials["arm_mass"], La, 0.015), (La / 2, 0.0, 0.0))
        )
        bodies.append(RigidBody3D(materials["bar_mass"], _slender_inertia(materials["bar_mass"], 2 * d, 0.005)))
        for _ in range(2):
            if rigid:
                bodies.append(RigidBody3D(rod_mass, _slender_inertia(rod_mass, Lr, rr), (Lr / 2, 0.0, 0.0)))
            else:
                nu = materials["rod_poisson"] if poisson is None else poisson
                bodies.append(AncfBeam3D(Lr, materials["rod_density"], youngs, section, n_elements, poisson=nu))
        bodies.append(RigidBody3D(materials["bar_mass"], _slender_inertia(materials["bar_mass"], 2 * d, 0.005)))
        x, y, z = jnp.eye(3)
        # seed eq. 17-19: actuated hinge at the base, axis s_i (the arm's body y axis)
        joints.append(RevoluteJoint3D(arm, (0.0, 0.0, 0.0), y, None, geometry["base_radius"] * e, s))
        # elbow hinge: the upper bar (body x = s_i) turns about s_i on the arm
        joints.append(RevoluteJoint3D(upper, (0.0, 0.0, 0.0), x, arm, (La, 0.0, 0.0), y))
        # seed eq. 20-23: rod hinges about the parallelogram normal (bar body z)
        for rod, sign in ((rod_a, 1.0), (rod_b, -1.0)):
            for node_or_point, bar in ((0, upper), (-1, lower)):
                point = (sign * d, 0.0, 0.0)
                if rigid:
                    p_rod = (0.0, 0.0, 0.0) if node_or_point == 0 else (Lr, 0.0, 0.0)
                    joints.append(RevoluteJoint3D(rod, p_rod, z, bar, point, z))
                else:
                    joints.append(AncfRevolute3D(rod, node_or_point, z, bar, point, z))
        # platform hinge: lower bar centre on C_i, axis s_i
        joints.append(
            RevoluteJoint3D(lower, (0.0, 0.0, 0.0), x, body_index(0, "platform"), geometry["platform_radius"] * e, s)
        )
        # seed eq. 26: rheonomic driver theta_i(t) from the inverse kinematics
        joints.append(DrivingConstraint(arm, ArmAngle(e), ActuatorAngle(path, k)))
    m_p = materials["platform_mass"]
    bodies.append(RigidBody3D(m_p, _platform_inertia(m_p, geometry)))
    return System(bodies, joints, [Gravity((0.0, 0.0, -G))])


def _ncf(origin, axes):
    return jnp.concatenate([origin, axes[:, 0], axes[:, 1], axes[:, 2]])


@structural_jit  # one small program instead of one per array operation
def kinematic_state(system: System, t0: Scalar = 0.0, path: PlatformCirclePath | None = None, geometry=GEOMETRY):
    """Coordinates of the rigid mechanism at `path(t0)` (rods straight and unstrained),
    with zero velocities (the cycloidal path starts at rest)."""
    path = PlatformCirclePath() if path is None else path
    P = path(jnp.asarray(t0, float))
    theta = inverse_kinematics(P, geometry)
    E = elbow_positions(theta, geometry)
    Lr, d = geometry["rod_length"], geometry["bar_half_length"]
    zhat = jnp.array([0.0, 0.0, 1.0])
    parts = []
    for k, phi in enumerate(CHAIN_AZIMUTHS):
        e, s = _frames(phi)
        u = jnp.cos(theta[k]) * e - jnp.sin(theta[k]) * zhat
        parts.append(_ncf(geometry["base_radius"] * e, jnp.stack([u, s, jnp.cross(u, s)], axis=1)))
        C = P + geometry["platform_radius"] * e
        rho = (C - E[k]) / Lr
        v = rho - (rho @ s) * s
        v = v / jnp.linalg.norm(v)
        bar_axes = jnp.stack([s, v, jnp.cross(s, v)], axis=1)
        parts.append(_ncf(E[k], bar_axes))
        for sign in (1.0, -1.0):
            top = E[k] + sign * d * s
            rod = system.bodies[body_index(k, "rod_a")]
            if isinstance(rod, AncfBeam3D):
                parts.append(straight_beam_coordinates_3d(top, top + Lr * rho, rod.n_elements, y_axis=s))
            else:
                n = s - (s @ rho) * rho
                n = n / jnp.linalg.norm(n)
                parts.append(_ncf(top, jnp.stack([rho, n, jnp.cross(rho, n)], axis=1)))
        parts.append(_ncf(C, bar_axes))
    parts.append(_ncf(P, jnp.eye(3)))
    q0 = jnp.concatenate(parts)
    return q0, jnp.zeros_like(q0)


def initial_state(system: System, path: PlatformCirclePath | None = None):
    """Start of a run at rest at `path(0)`: the kinematic configuration, brought to static
    equilibrium under gravity with the arms held by the drivers (`solve_static`) when
    the rods are flexible, so that no sag transient starts the run."""
    q0, v0 = kinematic_state(system, 0.0, path)
    if any(isinstance(b, AncfBeam3D) for b in system.bodies):
        q0 = solve_static(system, q0, load_steps=1).q
    return q0, v0


def parallel_robot_solver(rigid: bool, rho_inf: float = 0.7, newton: str = "modified") -> GeneralizedAlpha:
    """Generalized-α, ρ∞ = 0.7 (seed §3.2); least-squares Newton for the rigid mechanism,
    whose $\\Phi_q$ is rank deficient. Modified Newton by default (`GeneralizedAlpha`:
    the Newton matrix of this 500-unknown system is kept across steps)."""
    return GeneralizedAlpha(rho_inf=rho_inf, redundant=rigid, newton=newton)


def simulate_parallel_robot(
    system: System,
    t1: float,
    dt: float = 0.002,
    *,
    rigid: bool = False,
    save_every: int = 1,
    path: PlatformCirclePath | None = None,
    throw: bool = True,
    progress: bool = False,
    newton: str = "modified",
):
    """Simulate from `initial_state` with `parallel_robot_solver(rigid, newton=newton)` (h = `dt`, seed: 0.002 s)."""
    q0, v0 = initial_state(system, path)
    return simulate(
        system,
        q0,
        v0,
        t1,
        dt,
        solver=parallel_robot_solver(rigid, newton=newton),
        save_every=save_every,
        throw=throw,
        progress=progress,
    )


def platform_response(system: System, traj):
    """Platform centre position, velocity and acceleration (m, m/s, m/s²), each `(nt, 3)`."""
    sl = system.body_slice(body_index(0, "platform"))
    return traj.q[:, sl][:, 0:3], traj.v[:, sl][:, 0:3], traj.a[:, sl][:, 0:3]


def rod_von_mises(system: System, q: Float[Array, " nq"], angles: int = 8) -> Float[Array, " chains"]:
    r"""Largest von Mises stress (Pa) per chain at one state: both rods, every element
    mid-point (the curvature is constant per element), `angles` points on the section
    perimeter. Returns zeros for rigid rods."""
    out = []
    for k in range(len(CHAIN_AZIMUTHS)):
        vals = []
        for part in ("rod_a", "rod_b"):
            i = body_index(k, part)
            rod = system.bodies[i]
            if not isinstance(rod, AncfBeam3D):
                vals.append(jnp.zeros((), q.dtype))
                continue
            a = 2 * jnp.pi * jnp.arange(angles) / angles
            s = (jnp.arange(rod.n_elements) + 0.5) * rod.element_length
            R = rod.section.radius
            pts = jnp.stack(jnp.broadcast_arrays(s[:, None], R * jnp.cos(a)[None, :], R * jnp.sin(a)[None, :]), -1)
            qi = q[system.body_slice(i)]
            vm = jax.vmap(lambda p, rod=rod, qi=qi: rod.von_mises(qi, p))(pts.reshape(-1, 3))
            vals.append(jnp.max(vm))
        out.append(jnp.max(jnp.stack(vals)))
    return jnp.stack(out)
