"""The fixed-step DAE solver contract used by `simulate`: solver, loop state, step report."""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int


class AbstractDAEState(eqx.Module):
    """The loop state of a DAE solver: what `simulate` reads and saves at every instant.

    - `q`, `v`, `qdd`: positions, velocities, accelerations, shape `(nq,)`.
    - `lam`: Lagrange multipliers, shape `(m,)`.
    - `z`: the states of the stateful force elements in force during the last step
      (`System.force_states`, one entry per element of `System.stateful_forces`).

    A solver's own state subclasses this and adds what it carries between steps.
    """

    q: eqx.AbstractVar[Float[Array, " nq"]]
    v: eqx.AbstractVar[Float[Array, " nq"]]
    qdd: eqx.AbstractVar[Float[Array, " nq"]]
    lam: eqx.AbstractVar[Float[Array, " m"]]
    z: eqx.AbstractVar[tuple]

    def held(self, healthy: Bool[Array, ""], new: "AbstractDAEState") -> "AbstractDAEState":
        """`new` where `healthy`, else this state: after a step, a sample whose run has
        failed keeps the state its failed step ended with. A solver whose state carries
        what steers only its own sample's iterations (a kept Newton matrix), which a
        failed sample never takes again, may take that part from `new` as it comes:
        under `vmap` a `where` over it is a copy of the whole batch's matrices per step."""
        return jax.tree_util.tree_map(lambda a, b: jnp.where(healthy, a, b), new, self)


class StepInfo(eqx.Module):
    """What one step reports: `converged`, its scaled `error` (<= 1 when converged),
    `iterations`, and `jacobians`, the Newton matrices formed in the step (equal to
    `iterations` with full Newton)."""

    converged: Bool[Array, ""]
    error: Float[Array, ""]
    iterations: Int[Array, ""]
    jacobians: Int[Array, ""]


class AbstractDAESolver(eqx.Module):
    r"""A one-step method for $M\ddot q + \Phi_q^T\lambda = Q$, $\Phi = 0$.

    `init(system, t0, q0, v0, Phi_q=None)` builds the loop state (an `AbstractDAEState`)
    at `t0` (`Phi_q`: the constraint Jacobian at `q0`, when the caller has formed it);
    `step(system, t, h, state, healthy, coupled)` advances it by `h` and returns
    `(state, StepInfo)`. `order` is the convergence order the tests check.

    Under `vmap`, `healthy` is False for the samples whose run has failed: they must
    take no part in anything the step decides or computes for the whole batch, so that
    their state (NaN, or diverged) never reaches the other samples. `couples_samples`
    says whether a sample's result depends on the others' at all (a Newton matrix
    shared by the batch); with `coupled=False` (a traced boolean, the same for the whole
    batch) it must not, in that step: `simulate` takes a step in which a sample failed
    again that way, since until it failed that sample took part in the step's shared
    work.
    """

    order: eqx.AbstractClassVar[int]

    @property
    @abc.abstractmethod
    def couples_samples(self) -> bool:
        """Whether, under `vmap`, a sample's result depends on the other samples'."""

    @abc.abstractmethod
    def init(self, system, t0, q0, v0, Phi_q=None) -> AbstractDAEState:
        """Loop state at `t0` (consistent accelerations and multipliers); `Phi_q`, if
        given, is $\\Phi_q(q_0, t_0)$, which the caller formed already."""

    @abc.abstractmethod
    def step(self, system, t, h, state, healthy=True, coupled=True) -> tuple[AbstractDAEState, StepInfo]:
        """Advance from `t` to `t + h`. `healthy`: False for a sample that is out of the
        batch; `coupled`: whether the samples may share work (see the class docstring)."""
