"""The fixed-step DAE solver interface used by `simulate`."""

import abc

import equinox as eqx


class AbstractDAESolver(eqx.Module):
    """A one-step method for $M\\ddot q + \\Phi_q^T\\lambda = Q$, $\\Phi = 0$.

    `init(system, t0, q0, v0) -> state` builds the loop state (a module of arrays with
    at least `q, v, qdd, lam`); `step(system, t, h, state) -> (state, StepInfo)` advances
    it by `h`. `order` is the convergence order the tests check.
    """

    order: eqx.AbstractClassVar[int]

    @abc.abstractmethod
    def init(self, system, t0, q0, v0):
        """Loop state at `t0` (consistent accelerations and multipliers)."""

    @abc.abstractmethod
    def step(self, system, t, h, state):
        """Advance from `t` to `t + h`; returns `(state, StepInfo)`."""
