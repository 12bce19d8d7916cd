r"""Contact phases, their equations of motion, the impact map and the switching tests (seed 004 §2).

Variable topology: the contact adds 0, 1 or 2 constraint rows depending on the phase.

- separation: $M\ddot q + \Phi_q^T\lambda = Q$ (only the system's own constraints).
- stick (seed eq. 8-12): normal and tangential rows $g_N = 0$, $g_T - g_T^\ast = 0$
  ($g_T^\ast$, the `anchor`, is $g_T$ where sticking began):
  $M\ddot q + \Phi_q^T\lambda = Q + J_N^T\lambda_N + J_T^T\lambda_T$.
- slip in direction $s = \pm1$ (seed eq. 13-14, the sliding-friction potential): normal row
  only, friction $\lambda_T = -\mu\lambda_N s$ through the tangential Jacobian,
  $M\ddot q + \Phi_q^T\lambda = Q + (J_N - \mu s J_T)^T\lambda_N$.

Every constraint row is stabilized (Baumgarte): $\ddot g + 2\alpha\dot g + \beta^2 g = 0$,
i.e. $J\ddot q = \gamma_g - 2\alpha\dot g - \beta^2 g$. All three phases are one
branch-free linear solve: an inactive contact row is replaced by $\lambda_i = 0$, so the
phase is data (`Mode`), and one compiled vector field serves every phase.

Impact (seed eq. 4-7, impulse-momentum): $M(\dot q^+ - \dot q^-) = \Phi_q^T(-P) +
J_N^T P_N + J_T^T P_T$, $\Phi_q \dot q^+ = \Phi_q \dot q^-$, $J_N\dot q^+ = -e\,J_N\dot q^-$
and, if the sticking impulse lies in the friction cone $|P_T| \le \mu P_N$,
$J_T\dot q^+ = 0$; otherwise a sliding impact with $P_T = -\mu s P_N$.

Switching criteria (seed §2.4, eq. 15), as zero-crossings located by diffrax events:

| phase | event function (crosses zero downwards) | next phase |
|---|---|---|
| separation | $g_N$ (+ offset) | impact |
| stick, slip | $\lambda_N$ | separation |
| stick | $\mu\lambda_N - |\lambda_T|$ | slip against $\lambda_T$: $s = -\mathrm{sign}(\lambda_T)$ |
| slip | $s\,\dot g_T$ (+ offset) | stick or reversed slip (`classify`) |

Offsets (`event_offsets`, from `gap_tol` and `velocity_tol`) make a phase that starts on
its switching surface start strictly on the positive side.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from .._custom_types import Scalar
from ..solvers.ode_forms import Baumgarte, stabilized_rows
from .geometry import PointSurfaceContact

SEPARATION, STICK, SLIP_POSITIVE, SLIP_NEGATIVE, IMPACT = 0, 1, 2, 3, 4
PHASE_NAMES = {
    SEPARATION: "separation",
    STICK: "stick",
    SLIP_POSITIVE: "slip+",
    SLIP_NEGATIVE: "slip-",
    IMPACT: "impact",
}
# causes of a switch, as logged
EVENT_NAMES = ("impact", "release", "slip_negative", "slip_positive", "reversal")


class Mode(eqx.Module):
    r"""A smooth phase as data: `normal`, `tangential` (1.0 where the row is active) and the
    slip direction `s` ($\pm1$ in slip, 0 otherwise), plus the stick `anchor` $g_T^\ast$ (m)."""

    normal: Float[Array, "*rows"]
    tangential: Float[Array, "*rows"]
    s: Float[Array, "*rows"]
    anchor: Float[Array, "*rows"]


def mode(phase: int, anchor=0.0) -> Mode:
    """The `Mode` of a phase code (`SEPARATION`, `STICK`, `SLIP_POSITIVE`, `SLIP_NEGATIVE`)."""
    normal, tangential, s = {
        SEPARATION: (0.0, 0.0, 0.0),
        STICK: (1.0, 1.0, 0.0),
        SLIP_POSITIVE: (1.0, 0.0, 1.0),
        SLIP_NEGATIVE: (1.0, 0.0, -1.0),
    }[phase]
    f = lambda x: jnp.asarray(x, float)
    return Mode(f(normal), f(tangential), f(s), f(anchor))


class PhaseState(eqx.Module):
    r"""Accelerations and forces of a phase at one state: `qdd`, system multipliers `lam`,
    contact forces `lam_n`, `lam_t` (N), gaps `g` $= [g_N, g_T]$ (m), gap rates `gd` (m/s)."""

    qdd: Float[Array, " nq"]
    lam: Float[Array, " m"]
    lam_n: Scalar
    lam_t: Scalar
    g: Float[Array, " 2"]
    gd: Float[Array, " 2"]


def phase_dynamics(system, contact: PointSurfaceContact, stab: Baumgarte, md: Mode, q, v, t) -> PhaseState:
    r"""Solve the stabilized equations of motion of phase `md` (module docstring).

    Unknowns $[\ddot q, \lambda, \lambda_N, \lambda_T]$ of
    $M\ddot q + \Phi_q^T\lambda - G_N^T\lambda_N - J_T^T\lambda_T = Q$,
    $\Phi_q\ddot q = b$, $a_i(J_i\ddot q) + (1 - a_i)\lambda_i = a_i b_i$ with
    $G_N = J_N - \mu s J_T$ and $a_i$ the row activity.
    """
    nq = q.shape[0]
    M, Q = system.mass(q), system.forces(q, v, t)
    A, b = stabilized_rows(system, q, v, t, stab.alpha, stab.beta)
    m = A.shape[0]
    g = contact.gaps(system, q) - jnp.stack([jnp.zeros_like(md.anchor), md.anchor])
    J = contact.jacobian(system, q)
    gd = J @ v
    bc = contact.gap_gamma(system, q, v) - 2 * stab.alpha * gd - stab.beta**2 * g
    on = jnp.stack([md.normal, md.tangential])
    G = jnp.stack([J[0] - contact.mu * md.s * J[1], J[1]])  # force directions (seed eq. 14 in slip)
    K = jnp.block(
        [
            [M, A.T, -G.T],
            [A, jnp.zeros((m, m + 2), q.dtype)],
            [on[:, None] * J, jnp.zeros((2, m), q.dtype), jnp.diag(1.0 - on)],
        ]
    )
    x = jnp.linalg.solve(K, jnp.concatenate([Q, b, on * bc]))
    lam_n = x[nq + m]
    # slip: the friction force follows from lambda_N; stick: its own multiplier
    lam_t = jnp.where(md.tangential > 0, x[nq + m + 1], -contact.mu * md.s * lam_n)
    return PhaseState(x[:nq], x[nq : nq + m], lam_n, lam_t, g, gd)


def event_values(system, contact, stab, md: Mode, q, v, t) -> Float[Array, " 2"]:
    r"""The two switching functions of phase `md` (module docstring), without offsets.

    `[normal, tangential]`: normal = $g_N$ in separation, $\lambda_N$ in contact;
    tangential = $\mu\lambda_N - |\lambda_T|$ in stick, $s\,\dot g_T$ in slip, 1 in
    separation. Each crosses zero downwards at a switch; $|\lambda_T|$ is smooth there
    because $|\lambda_T| = \mu\lambda_N > 0$ at the crossing.
    """
    ps = phase_dynamics(system, contact, stab, md, q, v, t)
    sep = md.normal == 0
    stick = md.tangential > 0
    normal = jnp.where(sep, ps.g[0], ps.lam_n)
    tangential = jnp.where(stick, contact.mu * ps.lam_n - jnp.abs(ps.lam_t), md.s * ps.gd[1])
    return jnp.stack([normal, jnp.where(sep, jnp.ones_like(normal), tangential)])


def event_offsets(values0: Float[Array, " 2"], md: Mode, gap_tol, velocity_tol) -> Float[Array, " 2"]:
    r"""Offsets added to `event_values` for one segment, so that each switching function
    starts strictly positive: $\epsilon - \min(c(t_0), 0)$ on the gap (separation) and the
    slip velocity (slip), 0 on forces. A phase that starts on its switching surface (a
    rebound from $g_N = -\epsilon_g$, a slip from $\dot g_T = 0$) then still sees a
    return within its first step."""
    sep = md.normal == 0
    slip = (md.normal > 0) & (md.tangential == 0)
    shift = lambda tol, c: tol - jnp.minimum(c, 0.0)
    return jnp.stack(
        [
            jnp.where(sep, shift(gap_tol, values0[0]), 0.0),
            jnp.where(slip, shift(velocity_tol, values0[1]), 0.0),
        ]
    )


class ImpactResult(eqx.Module):
    r"""Outcome of the impulse-momentum impact: post-impact velocities `v`, normal and
    tangential impulses `p_n`, `p_t` (N s), `stuck` (True: sticking impact)."""

    v: Float[Array, " nq"]
    p_n: Scalar
    p_t: Scalar
    stuck: Bool[Array, ""]


def impact(system, contact: PointSurfaceContact, q, v, t) -> ImpactResult:
    r"""Post-impact velocities by impulse-momentum (module docstring; seed eq. 4-7).

    The system's own velocity constraints keep their pre-impact values (no impulse
    changes a consistent $\Phi_q\dot q$). The sticking impact is tried first; if its
    tangential impulse leaves the friction cone, the sliding impact with
    $P_T = -\mu s P_N$, $s = \mathrm{sign}(\dot g_T^-)$, is used.
    """
    nq = q.shape[0]
    t = jnp.asarray(t, q.dtype)
    M = system.mass(q)
    A, _ = system.acceleration_constraints(q, v, t)
    m = A.shape[0]
    J = contact.jacobian(system, q)
    vn, vt = J @ v
    target_n = -contact.restitution * vn

    def solve(G, rows, target):
        k = rows.shape[0]
        K = jnp.block([[M, A.T, -G.T], [A, jnp.zeros((m, m + k), q.dtype)], [rows, jnp.zeros((k, m + k), q.dtype)]])
        x = jnp.linalg.solve(K, jnp.concatenate([M @ v, A @ v, target]))
        return x[:nq], x[nq + m :]

    v_stick, p_stick = solve(J, J, jnp.stack([target_n, jnp.zeros_like(vt)]))
    stuck = jnp.abs(p_stick[1]) <= contact.mu * p_stick[0]
    s = jnp.where(vt != 0, jnp.sign(vt), -jnp.sign(p_stick[1]))
    v_slide, p_slide = solve((J[0] - contact.mu * s * J[1])[None], J[:1], target_n[None])
    return ImpactResult(
        v=jnp.where(stuck, v_stick, v_slide),
        p_n=jnp.where(stuck, p_stick[0], p_slide[0]),
        p_t=jnp.where(stuck, p_stick[1], -contact.mu * s * p_slide[0]),
        stuck=stuck,
    )


class Classification(eqx.Module):
    r"""Forces of the candidate contact phases at one state, for `classify`: normal and
    tangential force in stick (`stick_n`, `stick_t`), normal force in slip +/- (`slip_n`,
    a 2-vector for $s = +1, -1$), the gaps `g` and rates `gd`."""

    stick_n: Scalar
    stick_t: Scalar
    slip_n: Float[Array, " 2"]
    g: Float[Array, " 2"]
    gd: Float[Array, " 2"]


def candidates(system, contact, stab, q, v, t, anchor) -> Classification:
    """Evaluate the stick and both slip phases at `(q, v, t)` (stick anchored at `anchor`)."""
    st = phase_dynamics(system, contact, stab, mode(STICK, anchor), q, v, t)
    sp = phase_dynamics(system, contact, stab, mode(SLIP_POSITIVE), q, v, t)
    sn = phase_dynamics(system, contact, stab, mode(SLIP_NEGATIVE), q, v, t)
    return Classification(st.lam_n, st.lam_t, jnp.stack([sp.lam_n, sn.lam_n]), st.g, st.gd)


def classify(c: Classification, mu: float, velocity_tol: float) -> int:
    r"""Consistent phase of a closed contact (seed eq. 15), from concrete candidate forces.

    With $|\dot g_T| \le \epsilon_v$: stick if $\lambda_N \ge 0$ and $|\lambda_T| \le
    \mu\lambda_N$; if the stick force leaves the cone, slip against it,
    $s = -\mathrm{sign}(\lambda_T)$; otherwise (tensile $\lambda_N$) separation. With
    $|\dot g_T| > \epsilon_v$: slip with $s = \mathrm{sign}(\dot g_T)$, or separation if its
    $\lambda_N < 0$.
    """
    vt = float(c.gd[1])
    lam_n, lam_t = float(c.stick_n), float(c.stick_t)
    if abs(vt) <= velocity_tol:
        if lam_n < 0:
            return SEPARATION
        if abs(lam_t) <= mu * lam_n:
            return STICK
        s = -1.0 if lam_t > 0 else 1.0
    else:
        s = 1.0 if vt > 0 else -1.0
    slip_n = float(c.slip_n[0] if s > 0 else c.slip_n[1])
    if slip_n < 0:
        return SEPARATION
    return SLIP_POSITIVE if s > 0 else SLIP_NEGATIVE
