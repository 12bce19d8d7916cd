r"""Planar hub carrying an Euler-Bernoulli beam described by assumed modes (seed 000).

Coordinates $q_b = [\theta, q_1, q_2]$: hub angle, axial and transverse modal
coordinates (m). In the floating hub frame a beam point at axial coordinate $x$ is at
$[x + w_1 + w_c,\ w_2]$ with $w_1 = \Phi_1 q_1$, $w_2 = \Phi_2 q_2$ (seed eq. 37) and the
second-order axial shortening $w_c = -\tfrac12 q_2^T S(x) q_2$,
$S(x) = \int_0^x \Phi_2'^T \Phi_2'\,d\xi$ (eq. 4, 42-43). World position:
$r = \Theta(\theta)[x + w_1 + w_c,\ w_2]^T$ (eq. 2); the hub pivot is fixed at the origin.

Equations of motion by Lagrange, with autodiff: $M = \partial^2 T / \partial v^2$ and
$Q = \partial T/\partial q - (\partial^2 T/\partial v\,\partial q)\,v - \partial V/\partial q
+ Q_{damp}$. Two kinetic energies (static `kinetic`):

- `"paper"` (default): the seed's truncation (eq. 18, 45-48): $w_c$ kept only in the
  centrifugal term $\dot\theta^2 \int \rho A\, 2 x w_c$,
  $T = \tfrac12 J_H\dot\theta^2 + \tfrac12\int\rho A[\dot w_1^2 + \dot w_2^2
  + 2\dot\theta((x + w_1)\dot w_2 - w_2\dot w_1) + \dot\theta^2(x^2 + 2x(w_1 + w_c) + w_1^2 + w_2^2)]dx$.
  Its Lagrange equations are exactly seed eq. 45-47 (`M Ÿ + 2θ̇ G Ẏ + K Y = Q`), which
  the tests check term by term against `paper_matrices`.
- `"exact"`: the complete kinetic energy of the assumed displacement field,
  $T = \tfrac12 J_H\dot\theta^2 + \tfrac12\int\rho A\,|\dot r|^2 dx$ with $w_c$ everywhere.
  The two differ only in terms of third and higher order in the deformation.
  "Exact" is not more accurate: the field $[x + w_c,\ w_2]$ is itself right only to
  second order (a beam turned by $\varphi$ about a pinned root, $w_2 = x\varphi$, sits at
  $[x(1 - \varphi^2/2),\ x\varphi]$, not $[x\cos\varphi,\ x\sin\varphi]$), and its exact kinetic
  energy carries that error into the third-order terms: the hub-beam coupling
  $\partial^2 T/\partial\dot\theta\,\partial\dot\varphi$ becomes $I_b(1 + \varphi^2/2)$ where a
  rotation has $I_b = \int\rho A x^2 dx$, which `"paper"` keeps. With an elastic root
  and large joint deflections (the FLFJ arm at 0.14 m tip bending) `"exact"` is about
  8 % off a nonlinear ANCF reference where `"paper"` is about 1 % (`docs/flfj.md`).

With `wc=False` both reduce to the classic linear (Kane) model, without geometric
stiffening. $V = \tfrac12 q_1^T K_1 q_1 + \tfrac12 q_2^T K_2 q_2$ (eq. 44, 48, the root
spring inside $K_2$). Damping (eq. 49): joint $c\,\Phi_2'(0)^T\Phi_2'(0)$ and
mass-proportional $\alpha_1 M_1$, $\alpha_2 M_2$.

Modes: `root="elastic"` uses the elastically constrained modes of `_beam_modes`
(pinned beam, root spring `k`, free tip); `root="clamped"` the cantilever's (a beam
clamped to the hub, for the Spong model and the spin-up; no `k`, `c`). Constants of
eq. 48 by Gauss-Legendre quadrature (`24 + 8 n` points on $[0, l]$; $S(x)$ at the nodes
by cumulative Gauss integration, `_beam_modes.integration_matrix`; nested Gauss
quadrature on $[0, x]$ at other points).

**What is cached.** The roots $\gamma_i$ (`gamma`, found by bracketing) and the
dimensionless shape tables at the Gauss nodes (`shapes`) are computed once, at
construction, so the right-hand side costs no root search or mode evaluation.
Derivatives are not lost: `roots()` re-attaches $d\gamma/d(k, EI, l)$ by the implicit
function theorem, and `_beam_modes.cached_shape_tables` returns the cached tables
with the JVP of the true tables (evaluated only when something is differentiated).
So `jax.grad`/`jax.vmap` through a function that builds the body, and gradients with
respect to the leaves of a built body (`eqx.filter_grad`), are exact. Changing `k`,
`ei` or `length` with `eqx.tree_at` makes the cache stale: `roots()` checks the
residual of eq. 32 and raises (under jit too); build a new body instead. `rho_a`, `ea`,
`hub_inertia`, `c` and the damping coefficients enter only as factors and may be
changed freely. Inside a compiled program the check is an `eqx.error_if` host callback,
which keeps the program out of JAX's persistent compilation cache; `simulate` and
`simulate_ode` therefore check the beams of a model with concrete leaves in Python
before compiling (`with_roots_checked`) and compile the check out of that program.
"""

import copy
from typing import ClassVar, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._checks import check_shape, is_concrete
from .._custom_types import Scalar
from ._beam_modes import (
    ShapeTables,
    axial_modes,
    bracket_roots,
    cached_shape_tables,
    eval_modes,
    gauss_legendre,
    mode_coefficients,
    quadrature_order,
    refine_roots,
    shape_tables,
)
from .base import AbstractBody


class HubBeamTables(eqx.Module):
    r"""Modal data of a `ModalHubBeam` at the quadrature nodes (all SI units).

    - `gamma`: transverse roots $\beta_i l$; `x`, `m`: node positions (m) and masses
      $\rho A\, l\, w_g$ (kg).
    - `phi1`, `phi2`: $\Phi_1$, $\Phi_2$ at the nodes; `dphi1`: $\Phi_1'$ (1/m);
      `ddphi2`: $\Phi_2''$ (1/m²); `S`: $S(x_g)$ (1/m); `dphi2_root`: $\Phi_2'(0)$ (1/m).
    """

    gamma: Float[Array, " n2"]
    x: Float[Array, " g"]
    m: Float[Array, " g"]
    phi1: Float[Array, "g n1"]
    dphi1: Float[Array, "g n1"]
    phi2: Float[Array, "g n2"]
    ddphi2: Float[Array, "g n2"]
    S: Float[Array, "g n2 n2"]
    dphi2_root: Float[Array, " n2"]


class HubBeamConstants(eqx.Module):
    r"""Constant matrices of seed eq. 48 (plus $C_2$ of eq. 49 per unit damping).

    $J_1 = \int\rho A x^2$, $M_j = \int\rho A\Phi_j^T\Phi_j$, $R = \int\rho A\Phi_1^T\Phi_2$,
    $K_1 = \int EA\,\Phi_1'^T\Phi_1'$, $K_2 = \int EI\,\Phi_2''^T\Phi_2'' + k\Phi_2'(0)^T\Phi_2'(0)$,
    $U_j = \int\rho A x\Phi_j$, $D = \int\rho A x S(x)$, `root_coupling` $= \Phi_2'(0)^T\Phi_2'(0)$.
    """

    J1: Scalar
    M1: Float[Array, "n1 n1"]
    M2: Float[Array, "n2 n2"]
    R: Float[Array, "n1 n2"]
    K1: Float[Array, "n1 n1"]
    K2: Float[Array, "n2 n2"]
    U1: Float[Array, " n1"]
    U2: Float[Array, " n2"]
    D: Float[Array, "n2 n2"]
    root_coupling: Float[Array, "n2 n2"]


_STALE = (
    "ModalHubBeam: the cached roots do not solve the frequency equation for the current "
    "k, ei, length (changed after construction?); build a new ModalHubBeam instead"
)


@eqx.filter_jit
def _stale(beam) -> Array:
    return beam._checked_roots()[1]


def with_roots_checked(system):
    """`system` with the cached roots of each `ModalHubBeam` of concrete leaves checked
    in Python (stale roots raise `ValueError`) and that beam marked `roots_checked`, so
    that the program compiled for it leaves the in-program check (a host callback) out.
    The mark is a static field: such a program is never reused for an unchecked beam."""
    bodies = []
    for body in system.bodies:
        if isinstance(body, ModalHubBeam) and not body.roots_checked and body._concrete():
            with jax.ensure_compile_time_eval():  # numbers, also inside a caller's jit
                stale = bool(_stale(body))
            if stale:
                raise ValueError(_STALE + ".")
            body = copy.copy(body)
            object.__setattr__(body, "roots_checked", True)  # a static field: no tree_at
        bodies.append(body)
    if all(b is c for b, c in zip(bodies, system.bodies, strict=True)):
        return system
    return eqx.tree_at(lambda s: s.bodies, system, tuple(bodies))


def _rot(theta):
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])


class ModalHubBeam(AbstractBody):
    r"""Hub + assumed-modes Euler-Bernoulli beam, $q_b = [\theta, q_1, q_2]$ (module docstring)."""

    hub_inertia: Float[Array, ""]
    length: Float[Array, ""]
    rho_a: Float[Array, ""]
    ea: Float[Array, ""]
    ei: Float[Array, ""]
    k: Float[Array, ""]
    c: Float[Array, ""]
    alpha_axial: Float[Array, ""]
    alpha_transverse: Float[Array, ""]
    gamma: Float[Array, " n2"]
    shapes: ShapeTables
    n_axial: int = eqx.field(static=True)
    n_transverse: int = eqx.field(static=True)
    wc: bool = eqx.field(static=True)
    root: str = eqx.field(static=True)
    kinetic: str = eqx.field(static=True)
    ncoords: int = eqx.field(static=True)
    # set by `simulate`/`simulate_ode` on their copy of a beam whose roots they checked
    roots_checked: bool = eqx.field(static=True, default=False)
    dim: ClassVar[int] = 2
    point_size: ClassVar[int] = 1
    nconstraints: ClassVar[int] = 0

    def __init__(
        self,
        hub_inertia,
        length,
        rho_a,
        ea,
        ei,
        k=None,
        c=0.0,
        *,
        alpha_axial=0.0,
        alpha_transverse=0.0,
        n_axial: int = 1,
        n_transverse: int = 4,
        wc: bool = True,
        root: Literal["elastic", "clamped"] = "elastic",
        kinetic: Literal["paper", "exact"] = "paper",
    ):
        r"""**Arguments:**

        - `hub_inertia`: $J_H$, hub (rotor) inertia about the pivot, kg m², $\ge 0$
          ($> 0$ when `k = 0`, else the mass matrix is singular).
        - `length`: $l$, m, $> 0$. `rho_a`: $\rho A$, kg/m, $> 0$.
        - `ea`: $EA$, N, $> 0$. `ei`: $EI$, N m², $> 0$.
        - `k`: root (joint) spring, N m/rad, $\ge 0$ and finite; required for
          `root="elastic"`, must be omitted for `root="clamped"`.
        - `c`: root (joint) damper, N m s/rad, $\ge 0$ (elastic root only).
        - `alpha_axial`, `alpha_transverse`: mass-proportional damping $\alpha_1$, $\alpha_2$ (1/s).
        - `n_axial` ($\ge 0$; 0 = axially rigid), `n_transverse` ($\ge 1$): mode counts (static).
        - `wc`: keep the axial shortening $w_c$ (geometric stiffening), static.
        - `root`: `"elastic"` (FLFJ: pinned + spring) or `"clamped"` (cantilever).
        - `kinetic`: `"paper"` (seed eq. 45-48) or `"exact"` (module docstring).
        """
        owner = "ModalHubBeam"
        if root not in ("elastic", "clamped"):
            raise ValueError(f"{owner}: `root` must be 'elastic' or 'clamped', got {root!r}.")
        if kinetic not in ("paper", "exact"):
            raise ValueError(f"{owner}: `kinetic` must be 'paper' or 'exact', got {kinetic!r}.")
        if not isinstance(wc, bool):
            raise ValueError(f"{owner}: `wc` must be a bool (static), got {wc!r}.")
        for name, val, lo in (("n_axial", n_axial, 0), ("n_transverse", n_transverse, 1)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < lo:
                raise ValueError(f"{owner}: `{name}` must be an int >= {lo} (a static mode count), got {val!r}.")
        if root == "elastic" and k is None:
            raise ValueError(f"{owner}: root='elastic' needs the joint stiffness `k` (N m/rad, >= 0).")
        if root == "clamped" and (k is not None or (is_concrete(c) and np.any(np.asarray(c) != 0))):
            raise ValueError(
                f"{owner}: root='clamped' has no joint spring or damper; omit `k` and `c` "
                "(model a joint spring with a separate rotor, the Spong model)."
            )
        values = {
            "hub_inertia": hub_inertia,
            "length": length,
            "rho_a": rho_a,
            "ea": ea,
            "ei": ei,
            "k": 0.0 if k is None else k,
            "c": c,
            "alpha_axial": alpha_axial,
            "alpha_transverse": alpha_transverse,
        }
        positive = ("length", "rho_a", "ea", "ei")
        for name, val in values.items():
            arr = jnp.asarray(val, float)
            check_shape(owner, name, arr, ())
            if is_concrete(arr):
                a = float(arr)
                if not np.isfinite(a):
                    raise ValueError(f"{owner}: `{name}` must be finite, got {a}.")
                if name in positive and a <= 0:
                    raise ValueError(f"{owner}: `{name}` must be > 0, got {a}.")
                if a < 0:
                    raise ValueError(f"{owner}: `{name}` must be >= 0, got {a}.")
            setattr(self, name, arr)
        concrete = is_concrete(self.k) and is_concrete(self.hub_inertia)
        if root == "elastic" and concrete and float(self.k) == 0 and float(self.hub_inertia) == 0:
            raise ValueError(
                f"{owner}: with k = 0 the beam rotates freely on the pin and a hub with "
                "hub_inertia = 0 has no inertia: the mass matrix is singular; give hub_inertia > 0."
            )
        self.n_axial, self.n_transverse = int(n_axial), int(n_transverse)
        self.wc, self.root, self.kinetic = wc, root, kinetic
        self.ncoords = 1 + self.n_axial + self.n_transverse
        # cached: the roots (bracketing is the costly step) and the dimensionless shape
        # tables; `roots()`/`tables()` re-attach derivatives and check against the leaves
        self.gamma = bracket_roots(self._kappa(), self.n_transverse)
        self.shapes = jax.lax.stop_gradient(shape_tables(self.gamma, self._order()))

    # -- modal data ------------------------------------------------------------------
    def _kappa(self):
        return jnp.inf if self.root == "clamped" else self.k * self.length / self.ei

    def _checked_roots(self):
        g, residual = refine_roots(self.gamma, self._kappa())
        return g, jnp.any(jnp.abs(residual) > 1e-8)

    def _unless_checked(self, x, stale):
        """`x`, raising (`eqx.error_if`) for stale roots unless they were checked before
        compiling (`with_roots_checked`)."""
        return x if self.roots_checked else eqx.error_if(x, stale, _STALE)

    def _concrete(self) -> bool:
        return all(map(is_concrete, jax.tree_util.tree_leaves(eqx.filter(self, eqx.is_array))))

    def roots(self) -> Float[Array, " n2"]:
        r"""Transverse roots $\gamma_i = \beta_i l$ (seed eq. 32; cantilever for a clamped root).

        The roots bracketed at construction (`gamma`) get their derivatives with respect
        to `k`, `ei`, `length` here (`_beam_modes.refine_roots`, implicit function
        theorem). If those leaves were changed after construction (e.g. `eqx.tree_at`)
        the cached roots no longer solve eq. 32 and this raises (under jit too): build a
        new `ModalHubBeam` instead, inside the function you differentiate or vmap.
        """
        g, stale = self._checked_roots()
        return self._unless_checked(g, stale)

    def frequencies(self) -> Float[Array, " n2"]:
        r"""Transverse natural frequencies (Hz) of the beam with the hub held (seed eq. 34)."""
        g = self.roots()
        return g**2 / (2 * jnp.pi * self.length**2) * jnp.sqrt(self.ei / self.rho_a)

    def axial_frequencies(self) -> Float[Array, " n1"]:
        r"""Axial natural frequencies (Hz), $(2i-1)/(4l)\sqrt{EA/\rho A}$."""
        i = jnp.arange(1, self.n_axial + 1)
        return (2 * i - 1) / (4 * self.length) * jnp.sqrt(self.ea / self.rho_a)

    def _order(self):
        return quadrature_order(max(self.n_axial, self.n_transverse))

    def _nodes(self):
        return gauss_legendre(self._order())

    def _S(self, coef, x):
        """$S(x)$ for a batch of positions `x` (m), nested Gauss on [0, x]; shape (len(x), n2, n2)."""
        s_h, w_h = self._nodes()
        pts = (x[:, None] * s_h[None, :]).reshape(-1) / self.length
        d = eval_modes(coef, pts, 1).reshape(x.shape[0], s_h.shape[0], -1) / self.length
        return jnp.einsum("h,ghi,ghj->gij", w_h, d, d) * x[:, None, None]

    def tables(self) -> HubBeamTables:
        """Mode shapes and $S$ at the quadrature nodes in SI units: the cached dimensionless
        tables scaled by the current `length` and `rho_a` (derivatives: module docstring)."""
        l = self.length
        gamma, stale = self._checked_roots()
        # the check must sit on values the dynamics use, or jit drops it
        sh = self._unless_checked(cached_shape_tables(self._order(), self.shapes, gamma), stale)
        s, w = self._nodes()
        return HubBeamTables(
            gamma=gamma,
            x=l * s,
            m=self.rho_a * l * w,
            phi1=axial_modes(self.n_axial, s),
            dphi1=axial_modes(self.n_axial, s, 1) / l,
            phi2=sh.phi,
            ddphi2=sh.ddphi / l**2,
            S=sh.S / l,
            dphi2_root=sh.dphi_root / l,
        )

    def constants(self, tables: HubBeamTables | None = None) -> HubBeamConstants:
        """The constant matrices of seed eq. 48 by Gauss quadrature."""
        tb = self.tables() if tables is None else tables
        m, x, l = tb.m, tb.x, self.length
        _, w = self._nodes()
        k = 0.0 if self.root == "clamped" else self.k
        rc = jnp.outer(tb.dphi2_root, tb.dphi2_root)
        return HubBeamConstants(
            J1=m @ x**2,
            M1=jnp.einsum("g,gi,gj->ij", m, tb.phi1, tb.phi1),
            M2=jnp.einsum("g,gi,gj->ij", m, tb.phi2, tb.phi2),
            R=jnp.einsum("g,gi,gj->ij", m, tb.phi1, tb.phi2),
            K1=self.ea * l * jnp.einsum("g,gi,gj->ij", w, tb.dphi1, tb.dphi1),
            K2=self.ei * l * jnp.einsum("g,gi,gj->ij", w, tb.ddphi2, tb.ddphi2) + k * rc,
            U1=(m * x) @ tb.phi1,
            U2=(m * x) @ tb.phi2,
            D=jnp.einsum("g,gij->ij", m * x, tb.S),
            root_coupling=rc,
        )

    # -- energies ----------------------------------------------------------------------
    def _split(self, y):
        n1 = self.n_axial
        return y[0], y[1 : 1 + n1], y[1 + n1 :]

    def _local(self, tb, q):
        """Floating-frame position [x + w1 + wc, w2] at the nodes, and w_c."""
        _, q1, q2 = self._split(q)
        wcg = -0.5 * jnp.einsum("i,gij,j->g", q2, tb.S, q2) if self.wc else jnp.zeros_like(tb.x)
        return tb.x + tb.phi1 @ q1 + wcg, tb.phi2 @ q2, wcg

    def _kinetic(self, tb, q, v):
        _, q1, q2 = self._split(q)
        th_d, q1d, q2d = self._split(v)
        w1, w2 = tb.phi1 @ q1, tb.phi2 @ q2
        w1d, w2d = tb.phi1 @ q1d, tb.phi2 @ q2d
        hub = 0.5 * self.hub_inertia * th_d**2
        if self.kinetic == "paper":
            wcg = -0.5 * jnp.einsum("i,gij,j->g", q2, tb.S, q2) if self.wc else 0.0
            x = tb.x
            dens = (
                w1d**2
                + w2d**2
                + 2 * th_d * ((x + w1) * w2d - w2 * w1d)
                + th_d**2 * (x**2 + 2 * x * (w1 + wcg) + w1**2 + w2**2)
            )
            return hub + 0.5 * tb.m @ dens
        xl, yl, _ = self._local(tb, q)
        xd = w1d - (jnp.einsum("i,gij,j->g", q2, tb.S, q2d) if self.wc else 0.0)
        dens = (xd - th_d * yl) ** 2 + (w2d + th_d * xl) ** 2
        return hub + 0.5 * tb.m @ dens

    def kinetic_energy(self, q: Float[Array, " n"], v: Float[Array, " n"]) -> Scalar:
        r"""Kinetic energy $T(q, \dot q)$ of hub and beam (the `kinetic` model)."""
        return self._kinetic(self.tables(), q, v)

    def _mass(self, tb, q):
        grad_v = jax.grad(lambda vv: self._kinetic(tb, q, vv))
        M = jax.jacfwd(grad_v)(jnp.zeros_like(q))  # T is quadratic in v: exact
        return 0.5 * (M + M.T)

    def mass_matrix(self, q):
        return self._mass(self.tables(), q)

    def force(self, q, v, t):
        tb = self.tables()
        cst = self.constants(tb)
        T = lambda qq, vv: self._kinetic(tb, qq, vv)
        dTdq = jax.grad(T, argnums=0)(q, v)
        # (d/dq dT/dv) v: the velocity-dependent part of d/dt (dT/dv)
        mixed = jax.jvp(lambda qq: jax.grad(T, argnums=1)(qq, v), (q,), (v,))[1]
        _, q1, q2 = self._split(q)
        _, q1d, q2d = self._split(v)
        c_root = 0.0 if self.root == "clamped" else self.c
        f1 = -cst.K1 @ q1 - self.alpha_axial * (cst.M1 @ q1d)
        f2 = -cst.K2 @ q2 - self.alpha_transverse * (cst.M2 @ q2d) - c_root * (cst.root_coupling @ q2d)
        return dTdq - mixed + jnp.concatenate([jnp.zeros(1, q.dtype), f1, f2])

    def potential_energy(self, q):
        cst = self.constants()
        _, q1, q2 = self._split(q)
        return 0.5 * q1 @ cst.K1 @ q1 + 0.5 * q2 @ cst.K2 @ q2

    # -- kinematics --------------------------------------------------------------------
    def constraints(self, q):
        return jnp.zeros((0,), q.dtype)

    def axes(self, q):
        """Hub (floating) frame axes $\\Theta(\\theta)$."""
        return _rot(q[0])

    def deformation(self, q: Float[Array, " n"], x: Float[ArrayLike, "*m"]) -> Float[Array, "m 2"]:
        r"""Floating-frame displacement $[w_1 + w_c,\ w_2]$ at axial positions `x` (m)."""
        x = jnp.atleast_1d(jnp.asarray(x, q.dtype))
        _, q1, q2 = self._split(q)
        coef = mode_coefficients(self.roots())
        s = x / self.length
        w1 = axial_modes(self.n_axial, s) @ q1
        w2 = eval_modes(coef, s) @ q2
        wcx = -0.5 * jnp.einsum("i,gij,j->g", q2, self._S(coef, x), q2) if self.wc else jnp.zeros_like(x)
        return jnp.stack([w1 + wcx, w2], axis=1)

    def position(self, q, point):
        """World position of the beam point at axial coordinate `point[0]` (m, in [0, l])."""
        x = point[0]
        d = self.deformation(q, x)[0]
        return _rot(q[0]) @ jnp.stack([x + d[0], d[1]])

    def total_mass(self) -> Scalar:
        """Beam mass $\\rho A l$ (the hub sits on the fixed pivot; its mass is not modelled)."""
        return self.rho_a * self.length

    def center_of_mass(self, q):
        """World centre of mass of the beam (quadrature over the deformed beam)."""
        tb = self.tables()
        xl, yl, _ = self._local(tb, q)
        local = jnp.stack([tb.m @ xl, tb.m @ yl]) / jnp.sum(tb.m)
        return _rot(q[0]) @ local

    # -- the seed's matrices -------------------------------------------------------------
    def paper_matrices(self, q: Float[Array, " n"], v: Float[Array, " n"]):
        r"""Seed eq. 46-47 assembled by hand from `constants()`: `(M, G, K, Q)` with
        $M\ddot Y + (2\dot\theta G + C)\dot Y + KY = Q + F$ ($C$, $F$ excluded). Used to
        check the autodiff Lagrangian of `kinetic="paper"`; $w_c$ terms follow `wc`."""
        cst = self.constants()
        th_d, q1d, q2d = self._split(v)
        _, q1, q2 = self._split(q)
        n1, n2 = self.n_axial, self.n_transverse
        D = cst.D if self.wc else jnp.zeros_like(cst.D)
        Mtt = self.hub_inertia + cst.J1 + q1 @ cst.M1 @ q1 + q2 @ cst.M2 @ q2 + 2 * cst.U1 @ q1 - q2 @ D @ q2
        Mq1t = -cst.R @ q2
        Mq2t = cst.U2 + q1 @ cst.R
        M = jnp.block(
            [
                [Mtt[None, None], Mq1t[None, :], Mq2t[None, :]],
                [Mq1t[:, None], cst.M1, jnp.zeros((n1, n2))],
                [Mq2t[:, None], jnp.zeros((n2, n1)), cst.M2],
            ]
        )
        G = jnp.block(
            [
                [jnp.zeros((1, 1)), jnp.zeros((1, n1)), jnp.zeros((1, n2))],
                [jnp.zeros((n1, 1)), jnp.zeros((n1, n1)), -cst.R],
                [jnp.zeros((n2, 1)), cst.R.T, jnp.zeros((n2, n2))],
            ]
        )
        K = jax.scipy.linalg.block_diag(
            jnp.zeros((1, 1)), cst.K1 - th_d**2 * cst.M1, cst.K2 - th_d**2 * cst.M2 + th_d**2 * D
        )
        Qt = -2 * th_d * (q1 @ cst.M1 @ q1d + q2 @ cst.M2 @ q2d + cst.U1 @ q1d - q2 @ D @ q2d)
        Q = jnp.concatenate([Qt[None], th_d**2 * cst.U1, jnp.zeros(n2)])
        return M, G, K, Q
