"""The fixed-step DAE solver interface used by `simulate`."""

import abc

import equinox as eqx


class AbstractDAESolver(eqx.Module):
    """A one-step method for $M\\ddot q + \\Phi_q^T\\lambda = Q$, $\\Phi = 0$.

    `init(system, t0, q0, v0) -> state` builds the loop state (a module of arrays with
    at least `q, v, qdd, lam`); `step(system, t, h, state, healthy) -> (state, StepInfo)`
    advances it by `h`. `order` is the convergence order the tests check.

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
    def init(self, system, t0, q0, v0):
        """Loop state at `t0` (consistent accelerations and multipliers)."""

    @abc.abstractmethod
    def step(self, system, t, h, state, healthy=True, coupled=True):
        """Advance from `t` to `t + h`; returns `(state, StepInfo)`. `healthy`: False
        for a sample that is out of the batch; `coupled`: whether the samples may share
        work (see the class docstring)."""
