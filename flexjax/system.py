r"""Assembly of bodies, joints and force elements into one system with a flat `q`.

The system exposes the pure maps of the equations of motion
$M(q)\,\ddot q + \Phi_q^T \lambda = Q(q, \dot q, t)$, $\Phi(q, t) = 0$:
`mass`, `forces`, `constraints` and their autodiff Jacobians. The coordinate layout
(`offsets`) is computed once, at construction, and is static.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
from jaxtyping import Array, Float

from ._checks import check_finite_leaves, check_points, is_concrete, known_value, warn_if_moved
from ._custom_types import Scalar
from ._emitter import forward_jit, largest_abs
from ._gc import gc_paused
from ._grouping import gather_rows, groups, map_stacked, signature
from ._structural import compiled_when_concrete, structural
from .bodies.base import AbstractBody
from .forces.base import AbstractForce, AbstractStatefulForce
from .joints.base import AbstractJoint, AbstractVelocityConstraint


class InconsistentInitialConditions(ValueError):
    """The initial state could not be projected onto the constraint manifold."""


# Largest nq for which a constant mass matrix is formed once and applied as one dense
# product in the Newton iterations (`System._with_dense_mass`): below it the per-body
# products cost more in kernel launches than the dense product in arithmetic (on CPU
# the two break even near nq = 100 for an ANCF chain; docs/core.md)
DENSE_MASS_MAX = 64
CONSISTENT_TOL = 1e-10  # largest accepted |Phi| and |Phi_q v + Phi_t| after projection
CONSISTENT_MAX_ITER = 50  # Gauss-Newton iterations of the position projection
_INCONSISTENT = (
    "inconsistent initial conditions: the projection onto the constraints failed "
    "(max |Phi| = {:.3e}, max |Phi_q v + Phi_t| = {:.3e}, tolerance {:.1e}); check the "
    "assembly (can the joints close?) and the initial guess"
)


class System(eqx.Module):
    r"""A multibody system: bodies, joints (constraints) and force elements.

    Body `i` owns `q[offsets[i]:offsets[i+1]]`. Constraint rows are ordered: the bodies'
    internal constraints (in body order), then the joints (in joint order).

    **Arguments:**

    - `bodies`: sequence of `AbstractBody`.
    - `joints`: sequence of `AbstractJoint` referring to bodies by index.
    - `force_elements`: sequence of `AbstractForce`.
    - `velocity_constraints`: sequence of `AbstractVelocityConstraint` (nonholonomic
      rows $\psi(q, \dot q, t) = 0$, integrated by `simulate_ode` only).

    `dense_mass` is `None` on a system you build; `simulate` sets it inside its compiled
    program for a small model of constant-mass bodies (`_with_dense_mass`).
    """

    bodies: tuple[AbstractBody, ...]
    joints: tuple[AbstractJoint, ...]
    force_elements: tuple[AbstractForce, ...]
    velocity_constraints: tuple[AbstractVelocityConstraint, ...]
    offsets: tuple[int, ...] = eqx.field(static=True)
    force_bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    dense_mass: Float[Array, "nq nq"] | None  # set only by `_with_dense_mass`

    def __init__(self, bodies, joints=(), force_elements=(), velocity_constraints=()):
        self.bodies, self.joints, self.force_elements = tuple(bodies), tuple(joints), tuple(force_elements)
        self.velocity_constraints = tuple(velocity_constraints)
        self.dense_mass = None
        if not self.bodies:
            raise ValueError("System: needs at least one body.")
        for i, b in enumerate(self.bodies):
            if not isinstance(b, AbstractBody):
                raise ValueError(f"System: body {i} is a {type(b).__name__}, not an AbstractBody.")
        nb = len(self.bodies)
        for k, vc in enumerate(self.velocity_constraints):
            if not isinstance(vc, AbstractVelocityConstraint):
                raise ValueError(
                    f"System: velocity constraint {k} is a {type(vc).__name__}, not an AbstractVelocityConstraint."
                )
        for k, jnt in enumerate(self.joints + self.velocity_constraints):
            if not isinstance(jnt, (AbstractJoint, AbstractVelocityConstraint)):
                raise ValueError(f"System: joint {k} is a {type(jnt).__name__}, not an AbstractJoint.")
            for idx in (jnt.body_i, jnt.body_j):
                if idx is None:
                    continue
                if not 0 <= idx < nb:
                    raise ValueError(
                        f"System: joint {k} ({type(jnt).__name__}) refers to body {idx}; "
                        f"the system has {nb} bodies (indices 0..{nb - 1})."
                    )
                if jnt.dim is not None and self.bodies[idx].dim != jnt.dim:
                    raise ValueError(
                        f"System: joint {k} ({type(jnt).__name__}) is {jnt.dim}D but body {idx} "
                        f"({type(self.bodies[idx]).__name__}) is {self.bodies[idx].dim}D."
                    )
        force_bodies = []
        for k, f in enumerate(self.force_elements):
            if not isinstance(f, AbstractForce):
                raise ValueError(f"System: force element {k} is a {type(f).__name__}, not an AbstractForce.")
            idx = tuple(range(nb)) if f.bodies is None else tuple(f.bodies)
            for i in idx:
                if not 0 <= i < nb:
                    raise ValueError(
                        f"System: force element {k} ({type(f).__name__}) refers to body {i}; "
                        f"the system has {nb} bodies."
                    )
            if f.dim is not None and any(self.bodies[i].dim != f.dim for i in idx):
                raise ValueError(
                    f"System: force element {k} ({type(f).__name__}) is {f.dim}D but acts on "
                    f"bodies of dimension {[self.bodies[i].dim for i in idx]}."
                )
            force_bodies.append(idx)
        self.force_bodies = tuple(force_bodies)
        self.offsets = tuple(int(x) for x in np.cumsum([0] + [b.ncoords for b in self.bodies]))
        check_points(self)  # attachment points: finite, with their body's point length
        check_finite_leaves(self)  # a NaN parameter fails here, not later as a Newton failure

    # -- layout ---------------------------------------------------------------
    @property
    def nq(self) -> int:
        """Number of generalized coordinates."""
        return self.offsets[-1]

    @property
    def nconstraints(self) -> int:
        """Number of position-level constraint rows (internal + joints)."""
        return sum(b.nconstraints for b in self.bodies) + sum(j.nconstraints for j in self.joints)

    @property
    def nvelocity_constraints(self) -> int:
        """Number of velocity-level (nonholonomic) constraint rows."""
        return sum(c.nconstraints for c in self.velocity_constraints)

    def body_slice(self, i: int) -> slice:
        """Slice of `q` owned by body `i`."""
        return slice(self.offsets[i], self.offsets[i + 1])

    def _part(self, x, i):
        if i is None:
            return jnp.zeros((0,), x.dtype)
        return x[self.body_slice(i)]

    def _index(self, i) -> np.ndarray:
        return np.arange(self.offsets[i], self.offsets[i + 1])

    def _per_body(self, fn, *xs, bodies: tuple[int, ...] | None = None) -> list:
        """`[fn(body, *(x's part of it)) for each body]` (of `bodies`, default all, in
        that order), bodies of equal signature (`flexjax._grouping`) through one `vmap`
        instead of one traced copy each."""
        which = tuple(range(len(self.bodies))) if bodies is None else tuple(bodies)
        out = [None] * len(which)
        for g in groups(signature(self.bodies[i]) for i in which):
            if len(g) == 1:
                i = which[g[0]]
                out[g[0]] = fn(self.bodies[i], *(self._part(x, i) for x in xs))
                continue
            index = np.stack([self._index(which[k]) for k in g])
            res = map_stacked(fn, [[self.bodies[which[k]] for k in g]], [gather_rows(x, index) for x in xs])
            for r, k in enumerate(g):
                out[k] = jax.tree_util.tree_map(lambda a, r=r: a[r], res)
        return out

    def _element_parts(self, f, idx, q, v, t) -> list:
        """The forces of element `f` on its bodies `idx`, in order."""
        if f.per_body:  # equal bodies through one vmap
            return self._per_body(lambda b, qb, vb: f.body_force(b, qb, vb, t), q, v, bodies=idx)
        bodies = tuple(self.bodies[i] for i in idx)
        return list(f.force(bodies, tuple(self._part(q, i) for i in idx), tuple(self._part(v, i) for i in idx), t))

    def _joint_rows(self, q, t) -> list:
        """Each joint's constraint rows, joints of equal signature between bodies of equal
        signatures through one `vmap`."""
        body_keys = [signature(b) for b in self.bodies]

        def key(j):
            return (
                signature(j, skip=("body_i", "body_j")),
                body_keys[j.body_i],
                None if j.body_j is None else body_keys[j.body_j],
            )

        def body(i):
            return None if i is None else self.bodies[i]

        out = [None] * len(self.joints)
        for g in groups(key(j) for j in self.joints):
            members = [self.joints[k] for k in g]
            if len(g) == 1:
                j = members[0]
                out[g[0]] = j.constraint(
                    body(j.body_i), self._part(q, j.body_i), body(j.body_j), self._part(q, j.body_j), t
                )
                continue
            qi = gather_rows(q, np.stack([self._index(j.body_i) for j in members]))
            qj = (
                jnp.zeros((len(g), 0), q.dtype)
                if members[0].body_j is None
                else gather_rows(q, np.stack([self._index(j.body_j) for j in members]))
            )
            res = map_stacked(
                lambda jnt, bi, bj, qi, qj: jnt.constraint(bi, qi, bj, qj, t),
                [members, [body(j.body_i) for j in members], [body(j.body_j) for j in members]],
                [qi, qj],
            )
            for k, i in enumerate(g):
                out[i] = res[k]
        return out

    def _check_q(self, q):
        if jnp.shape(q) != (self.nq,):
            raise ValueError(f"System: expected coordinates of shape ({self.nq},), got {jnp.shape(q)}.")

    # -- equations of motion -----------------------------------------------------
    @compiled_when_concrete
    def mass(self, q: Float[Array, " nq"]) -> Float[Array, "nq nq"]:
        """Mass matrix $M(q)$ (block diagonal over bodies)."""
        self._check_q(q)
        if self.dense_mass is not None:
            return self.dense_mass
        return jax.scipy.linalg.block_diag(*self._per_body(lambda b, qb: b.mass_matrix(qb), q))

    @compiled_when_concrete
    def mass_product(self, q: Float[Array, " nq"], a: Float[Array, " nq"]) -> Float[Array, " nq"]:
        r"""$M(q)\,a$ body by body (`AbstractBody.mass_product`), without forming $M$:
        linear in the number of elements for meshed beams."""
        self._check_q(q)
        self._check_q(a)
        if self.dense_mass is not None:
            return self.dense_mass @ a
        return jnp.concatenate(self._per_body(lambda b, qb, ab: b.mass_product(qb, ab), q, a))

    def _with_dense_mass(self) -> "System":
        """The system with its mass matrix formed once, for `mass` and `mass_product` to
        use (one dense product instead of one kernel chain per body), where every body's
        mass matrix is constant (`AbstractBody.constant_mass`) and `nq <= DENSE_MASS_MAX`;
        otherwise the system itself. Formed from the system's own parameters, so it
        differentiates and batches like them; the solvers apply it inside their programs
        and never hand the copy back (an edited parameter would not update it)."""
        if self.dense_mass is not None or self.nq > DENSE_MASS_MAX:
            return self
        if not all(b.constant_mass for b in self.bodies):
            return self
        M = self.mass(jnp.zeros((self.nq,), float))
        return eqx.tree_at(lambda s: s.dense_mass, self, M, is_leaf=lambda x: x is None)

    @compiled_when_concrete
    def forces(self, q: Float[Array, " nq"], v: Float[Array, " nq"], t: Scalar) -> Float[Array, " nq"]:
        """Generalized forces $Q(q, \\dot q, t)$: body internal forces plus force elements."""
        return self.element_forces(q, v, t, self.body_forces(q, v, t))

    @compiled_when_concrete
    def body_forces(self, q: Float[Array, " nq"], v: Float[Array, " nq"], t: Scalar) -> Float[Array, " nq"]:
        """The bodies' own generalized forces (elastic, damping, quadratic velocity)."""
        self._check_q(q)
        return jnp.concatenate(self._per_body(lambda b, qb, vb: b.force(qb, vb, t), q, v))

    @compiled_when_concrete
    def element_forces(
        self, q: Float[Array, " nq"], v: Float[Array, " nq"], t: Scalar, start: Float[Array, " nq"] | None = None
    ) -> Float[Array, " nq"]:
        """The force elements' generalized forces (gravity, loads, springs, contacts),
        added to `start` (default zeros)."""
        self._check_q(q)
        Q = jnp.zeros_like(q) if start is None else start
        for f, idx in zip(self.force_elements, self.force_bodies, strict=True):
            parts = self._element_parts(f, idx, q, v, t)
            for i, Qi in zip(idx, parts, strict=True):
                # a padded add, not `.at[].add`: XLA fuses a pad with the sum, where an
                # indexed update is a scatter, a kernel (or loop) of its own per force
                Q = Q + jnp.pad(Qi, (self.offsets[i], self.nq - self.offsets[i + 1]))
        return Q

    @compiled_when_concrete
    def constraints(self, q: Float[Array, " nq"], t: Scalar) -> Float[Array, " m"]:
        r"""Constraint residual $\Phi(q, t)$."""
        self._check_q(q)
        parts = self._per_body(lambda b, qb: b.constraints(qb), q) + self._joint_rows(q, t)
        return jnp.concatenate([jnp.reshape(r, (-1,)) for r in parts] + [jnp.zeros((0,), q.dtype)])

    @compiled_when_concrete
    def constraints_q(self, q, t) -> Float[Array, "m nq"]:
        r"""Constraint Jacobian $\Phi_q$ by forward-mode autodiff."""
        return jax.jacfwd(self.constraints)(q, t)

    @compiled_when_concrete
    def constraint_velocity(self, q, v, t) -> Float[Array, " m"]:
        r"""$\dot\Phi = \Phi_q \dot q + \Phi_t$."""
        t = jnp.asarray(t, q.dtype)
        return jax.jvp(self.constraints, (q, t), (v, jnp.ones_like(t)))[1]

    @compiled_when_concrete
    def gamma(self, q, v, t) -> Float[Array, " m"]:
        r"""Acceleration right-hand side $\gamma$ with $\Phi_q \ddot q = \gamma$:
        $\gamma = -(\Phi_q \dot q)_q \dot q - 2\Phi_{qt}\dot q - \Phi_{tt}$,
        computed as $-\frac{d}{dt}\dot\Phi$ at fixed $\dot q$ (nested JVPs)."""
        t = jnp.asarray(t, q.dtype)
        return -jax.jvp(lambda qq, tt: self.constraint_velocity(qq, v, tt), (q, t), (v, jnp.ones_like(t)))[1]

    @compiled_when_concrete
    def nonholonomic(self, q, v, t) -> Float[Array, " p"]:
        r"""Velocity-level constraint residual $\psi(q, \dot q, t)$."""
        rows = []
        for c in self.velocity_constraints:
            bj = None if c.body_j is None else self.bodies[c.body_j]
            rows.append(
                c.velocity_constraint(
                    self.bodies[c.body_i],
                    self._part(q, c.body_i),
                    self._part(v, c.body_i),
                    bj,
                    self._part(q, c.body_j),
                    self._part(v, c.body_j),
                    t,
                )
            )
        return jnp.concatenate([jnp.reshape(r, (-1,)) for r in rows] + [jnp.zeros((0,), q.dtype)])

    @compiled_when_concrete
    def acceleration_constraints(self, q, v, t):
        r"""All constraints at acceleration level, $A\,\ddot q = b$.

        Rows: $\Phi_q \ddot q = \gamma$ (holonomic, differentiated twice), then
        $\psi_{\dot q}\ddot q = -(\psi_q \dot q + \psi_t)$ (nonholonomic, once).

        **Returns:** `(A, b)` without stabilization terms.
        """
        t = jnp.asarray(t, q.dtype)
        A, b = self.constraints_q(q, t), self.gamma(q, v, t)
        if self.velocity_constraints:
            psi_v = jax.jacfwd(self.nonholonomic, argnums=1)(q, v, t)
            psi_dot = jax.jvp(lambda qq, tt: self.nonholonomic(qq, v, tt), (q, t), (v, jnp.ones_like(t)))[1]
            A, b = jnp.concatenate([A, psi_v]), jnp.concatenate([b, -psi_dot])
        return A, b

    # -- discrete force-element states -------------------------------------------------
    @property
    def stateful_forces(self) -> tuple[int, ...]:
        """Indices of the force elements with a discrete state (`AbstractStatefulForce`)."""
        return tuple(k for k, f in enumerate(self.force_elements) if isinstance(f, AbstractStatefulForce))

    def force_states(self) -> tuple:
        """The current states of the stateful force elements, in `stateful_forces` order."""
        return tuple(self.force_elements[k].state for k in self.stateful_forces)

    def with_force_states(self, states: tuple) -> "System":
        """A copy of the system whose stateful force elements hold `states`."""
        ks = self.stateful_forces
        if not ks:
            return self
        return eqx.tree_at(lambda s: tuple(s.force_elements[k].state for k in ks), self, tuple(states))

    def with_flat_force_states(self, flat) -> "System":
        """`with_force_states` from one row of `Trajectory.force_state` (raveled states)."""
        states, start = [], 0
        for z in self.force_states():
            size = int(np.size(z))
            states.append(jnp.reshape(flat[start : start + size], jnp.shape(z)))
            start += size
        return self.with_force_states(tuple(states))

    def advance_force_states(self, q, v, t, h) -> tuple:
        r"""States of the stateful force elements for the step $t \to t + h$ that starts
        at $(q, \dot q)$ (`AbstractStatefulForce.advance_state`)."""
        out = []
        for k in self.stateful_forces:
            f, idx = self.force_elements[k], self.force_bodies[k]
            out.append(
                f.advance_state(
                    tuple(self.bodies[i] for i in idx),
                    tuple(self._part(q, i) for i in idx),
                    tuple(self._part(v, i) for i in idx),
                    t,
                    h,
                )
            )
        return tuple(out)

    # -- energy -------------------------------------------------------------------
    @compiled_when_concrete
    def kinetic_energy(self, q, v) -> Scalar:
        r"""$T = \tfrac12 \dot q^T M \dot q$."""
        return 0.5 * v @ self.mass_product(q, v)

    @compiled_when_concrete
    def potential_energy(self, q, t) -> Scalar:
        """Elastic energy of the bodies plus the potentials of the force elements."""
        V = sum(self._per_body(lambda b, qb: b.potential_energy(qb), q), jnp.zeros((), q.dtype))
        for f, idx in zip(self.force_elements, self.force_bodies, strict=True):
            if f.per_body:  # equal bodies through one vmap
                each = self._per_body(lambda b, qb, f=f: f.body_potential(b, qb, t), q, bodies=idx)
                V = V + sum(each, jnp.zeros((), q.dtype))
            else:
                V = V + f.potential_energy(tuple(self.bodies[i] for i in idx), tuple(self._part(q, i) for i in idx), t)
        return V

    @compiled_when_concrete
    def energy(self, q, v, t) -> Scalar:
        """Total mechanical energy $T + V$ (non-conservative loads have no potential)."""
        return self.kinetic_energy(q, v) + self.potential_energy(q, t)

    # -- initial conditions ------------------------------------------------------
    @gc_paused
    def consistent_state(self, q0, v0, t0=0.0, *, tol: float = CONSISTENT_TOL, max_iter: int = CONSISTENT_MAX_ITER):
        r"""Project `q0, v0` onto $\Phi(q, t_0) = 0$ and $\Phi_q v + \Phi_t = 0$.

        Positions: Gauss-Newton for the nearest consistent point,
        $q \leftarrow q - \Phi_q^+ \Phi$ (pseudo-inverse, so redundant constraints are
        fine). Velocities: $v = v_0 - \Phi_q^+ (\Phi_q v_0 + \Phi_t)$.

        A `ConsistencyWarning` says by how much when `q0` or `v0` moves by more than
        `MOVE_TOL` relative to $\max(1, |q_0|_\infty)$ (resp. $|v_0|_\infty$).

        **Returns:** `(q, v)`. **Raises:** `InconsistentInitialConditions` (a
        `ValueError`) naming the residuals when the projection fails (for example an
        assembly that cannot close), and `ValueError` for wrong shapes or non-finite input.
        """
        q0, v0 = jnp.asarray(q0, float), jnp.asarray(v0, float)
        self._check_q(q0)
        if jnp.shape(v0) != (self.nq,):
            raise ValueError(f"System: expected velocities of shape ({self.nq},), got {jnp.shape(v0)}.")
        if is_concrete(q0) and is_concrete(v0) and not (np.isfinite(q0).all() and np.isfinite(v0).all()):
            raise ValueError("System.consistent_state: initial state contains NaN or inf.")
        q, v, res_q, res_v = _project_jit(structural(self), q0, v0, jnp.asarray(t0, float), max_iter)
        q, v = _checked_projection(q, v, res_q, res_v, tol)
        warn_if_moved("System.consistent_state", q0, v0, q, v, stacklevel=4)  # a repair is never silent
        return q, v


def _checked_projection(q, v, res_q, res_v, tol=CONSISTENT_TOL):
    """`(q, v)`, or `InconsistentInitialConditions` when the residuals exceed `tol`
    (an `eqx.error_if` on `q` where the residuals are not known numbers: under `jit` or
    `vmap`). Under `grad` the numbers are known and checked here: no small programs."""
    known_q, known_v = known_value(res_q), known_value(res_v)
    if known_q is not None and known_v is not None:
        if not (float(known_q) <= tol and float(known_v) <= tol):
            raise InconsistentInitialConditions(_INCONSISTENT.format(float(known_q), float(known_v), tol))
        return q, v
    q = eqx.error_if(q, ~((res_q <= tol) & (res_v <= tol)), "inconsistent initial conditions")
    return q, v


def check_projection(traj, res_q, res_v):
    """`traj` of a run that started from a projected state, checked as
    `System.consistent_state` checks its result."""
    if known_value(res_q) is not None:  # numbers: checked in Python, nothing to index (no small programs)
        _checked_projection(None, None, res_q, res_v)
        return traj
    q0, _ = _checked_projection(traj.q[0], traj.v[0], res_q, res_v)
    return eqx.tree_at(lambda tr: tr.q, traj, traj.q.at[0].set(q0))


def _project(system, q0, v0, t0, max_iter):
    """Projection of `System.consistent_state` (traceable; `_project_jit` compiled)."""
    return projection(system, q0, v0, t0, max_iter)[:4]


def projection(system, q0, v0, t0, max_iter):
    r"""`(q, v, res_q, res_v, Phi_q)`: the projected state, its largest position and velocity
    residuals (inf when not finite) and $\Phi_q$ at the projected `q` (empty without
    position constraints).

    One linearization of the constraints (`linearized_constraints`) per Gauss-Newton
    iteration; the loop takes one more pass that only linearizes at the final `q`, and
    the velocity projection and both residuals are formed from that, so the
    constraints' code is traced once (a smaller program to compile)."""
    n, m, dtype = q0.shape[0], system.nconstraints, q0.dtype
    lin = (jnp.zeros((m,), dtype), jnp.zeros((m, n), dtype), jnp.zeros((m,), dtype))
    q = q0
    if m:

        def body(k, carry):
            q, _ = carry
            lin = linearized_constraints(system, q, t0)
            step = _min_norm_step(lin[1], lin[0])
            return jnp.where(k < max_iter, q - step, q), lin

        q, lin = jax.lax.fori_loop(0, max_iter + 1, body, (q0, lin))
    Phi, J, Phi_t = lin
    if system.nconstraints + system.nvelocity_constraints == 0:
        return q, v0, jnp.zeros(()), jnp.zeros(()), J
    if system.nvelocity_constraints:  # rows that are not the time derivative of Phi
        rows = lambda v: velocity_residuals(system, q, v, t0)
        v = v0 - _min_norm_step(_velocity_rows_jacobian(system, q, t0), rows(v0))
    else:
        rows = lambda v: J @ v + Phi_t
        v = v0 - _min_norm_step(J, rows(v0))
    res_q, res_v = largest_abs(Phi), largest_abs(rows(v))
    bad = ~jnp.isfinite(res_q) | ~jnp.isfinite(res_v)
    return q, v, jnp.where(bad, jnp.inf, res_q), jnp.where(bad, jnp.inf, res_v), J


def linearized_constraints(system, q, t):
    r"""$\Phi$, $\Phi_q$ and $\Phi_t$ at `(q, t)` from one batch of forward-mode
    derivatives of $\Phi(q, t)$ (the constraints' code traced once)."""
    n = q.shape[0]
    t = jnp.asarray(t, q.dtype)
    basis = jnp.eye(n + 1, dtype=q.dtype)
    Phi, cols = jax.vmap(lambda e: jax.jvp(system.constraints, (q, t), (e[:n], e[n])), out_axes=(None, 1))(basis)
    return Phi, cols[:, :n], cols[:, n]


_project_jit = forward_jit(_project)


def _min_norm_step(J, r):
    r"""$J^T (J J^T + \epsilon I)^{-1} r$: the minimum-norm solution of $J x = r$ for a
    consistent `r`, also where $J$ has dependent rows (redundant constraints). The
    tiny $\epsilon$ (1e-14 of the largest diagonal entry) only makes the matrix
    invertible when rows are dependent; the component of the solve it leaves
    undetermined lies in the null space of $J^T$ and drops out. Equal to
    $J^+ r$ where $J$ has full row rank, with the derivatives of an LU solve (cheaper to
    compile than those of a singular value decomposition)."""
    JJ = J @ J.T
    eps = 1e-14 * largest_abs(jnp.diagonal(JJ)) + jnp.finfo(J.dtype).tiny
    from .solvers._dense import solve  # one LAPACK call per sample under vmap

    return J.T @ solve(JJ + eps * jnp.eye(J.shape[0], dtype=J.dtype), r)


def velocity_residuals(system, q, v, t):
    r"""All velocity-level residuals: $[\Phi_q\dot q + \Phi_t;\ \psi]$."""
    return jnp.concatenate([system.constraint_velocity(q, v, t), system.nonholonomic(q, v, t)])


def _velocity_rows_jacobian(system, q, t):
    # both parts are affine in v, so the Jacobian at v = 0 is the matrix of the rows
    return jax.jacfwd(lambda v: velocity_residuals(system, q, v, t))(jnp.zeros_like(q))
