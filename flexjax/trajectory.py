r"""Simulation results: the `Trajectory` container, result codes, saving and plots."""

import pathlib
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from .results import RESULTS, code, from_code

_OUTPUTS = "outputs"  # prefix of the saved output arrays


class SolverError(RuntimeError):
    """A simulation did not complete; the message names where and by how much."""


class Trajectory(eqx.Module):
    r"""Saved states of a simulation.

    **Fields** (leading axis: saved instants):

    - `t` (s), `q`, `v`, `a` (accelerations $\ddot q$), `lam` (Lagrange multipliers).
    - `energy`: total mechanical energy $T + V$ (J) at each saved instant.
    - `constraint_residual`: $\max_i |\Phi_i(q, t)|$; `velocity_residual`:
      $\max_i |\Phi_q \dot q + \Phi_t|$.
    - `result`: how the run ended, a `flexjax.RESULTS` item (`RESULTS.successful`,
      `newton_failed`, `ode_failed`); batched like the other fields under `vmap`.
    - `failed_step`, `failed_time`, `failed_residual`: first failing step (-1 if none),
      its time and scaled Newton residual (generalized-α only).
    - `newton_iterations`: largest Newton iteration count in each saved interval.
    - `event_time`: time an ODE event stopped the run (`inf` if none). With an event,
      saved instants after it hold `inf`.
    - `force_state`: the discrete states of the stateful force elements
      (`System.force_states`, each raveled, concatenated in `System.stateful_forces`
      order) in force during the step that ended at each saved instant; shape
      `(ns, 0)` when the system has none (ODE runs always).
    - `outputs`: what the `outputs=fn(t, q, v)` argument of the simulation returned at
      each saved instant, stacked along a leading axis (the same pytree structure);
      `None` without `outputs`.
    """

    t: Float[Array, " ns"]
    q: Float[Array, "ns nq"]
    v: Float[Array, "ns nq"]
    a: Float[Array, "ns nq"]
    lam: Float[Array, "ns m"]
    energy: Float[Array, " ns"]
    constraint_residual: Float[Array, " ns"]
    velocity_residual: Float[Array, " ns"]
    result: RESULTS
    failed_step: Int[Array, ""]
    failed_time: Float[Array, ""]
    failed_residual: Float[Array, ""]
    newton_iterations: Int[Array, " ns"]
    event_time: Float[Array, ""]
    force_state: Float[Array, "ns nz"]
    outputs: Any = None

    @property
    def succeeded(self):
        """Boolean array: the run completed without solver failure."""
        return self.result == RESULTS.successful

    def save(self, path) -> pathlib.Path:
        """Write every field to a compressed `.npz` file; returns the path. Each array
        of `outputs` is stored under `outputs` followed by its pytree path
        (`jax.tree_util.keystr`)."""
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {k: np.asarray(getattr(self, k)) for k in self.__dataclass_fields__ if k not in ("outputs", "result")}
        arrays["result"] = code(self.result)  # the item's integer code
        for key, leaf in jax.tree_util.tree_leaves_with_path(self.outputs):
            arrays[_OUTPUTS + jax.tree_util.keystr(key)] = np.asarray(leaf)
        np.savez_compressed(path, **arrays)
        return path if path.suffix == ".npz" else path.with_suffix(path.suffix + ".npz")

    @classmethod
    def load(cls, path) -> "Trajectory":
        """Read a trajectory written by `save`. Saved `outputs` come back as a dict from
        their pytree path strings to arrays (a single array if `outputs` was one)."""
        data = np.load(path)
        fields = {k: jnp.asarray(data[k]) for k in cls.__dataclass_fields__ if k not in ("outputs", "result")}
        fields["result"] = from_code(data["result"])
        outs = {k[len(_OUTPUTS) :]: jnp.asarray(data[k]) for k in data.files if k.startswith(_OUTPUTS)}
        fields["outputs"] = (outs[""] if list(outs) == [""] else outs) or None
        return cls(**fields)

    def plot(self, path, indices=None, labels=None, what: str = "q", title: str = ""):
        """PNG plot of coordinates (`what` = "q", "v" or "a") against time."""
        from .plotting import plot_series

        y = np.asarray(getattr(self, what))
        idx = range(y.shape[1]) if indices is None else indices
        labels = labels or [f"{what}[{i}]" for i in idx]
        return plot_series(np.asarray(self.t), [y[:, i] for i in idx], labels, path, ylabel=what, title=title)

    def plot_diagnostics(self, path, title: str = ""):
        """PNG with energy and constraint residuals against time."""
        from .plotting import plot_diagnostics

        return plot_diagnostics(self, path, title=title)

    def animate(self, system, path, fps: int = 30, **kwargs):
        """Write a GIF or MP4 (by the suffix of `path`) of every body of `system` moving
        along this trajectory, with a time stamp; see `flexjax.animation.animate` for
        the keyword arguments. Returns the path."""
        from .animation import animate

        return animate(self, system, path, fps, **kwargs)


def check_result(traj: Trajectory, system=None) -> Trajectory:
    r"""Raise `SolverError` for a failed concrete trajectory; inside `jit`/`vmap` the
    `RESULTS` item raises its own message (`error_if`; the numbers stay in the
    trajectory fields).

    The message names the failure time, the residual and the likely causes read from
    the saved states (`flexjax._diagnose.failure_causes`: NaN in the state, a diverging
    constraint drift, huge multipliers, float32, and with `system` the rank of
    $\Phi_q$ at the last finite state); the step-size advice is given only when none
    of them is found."""
    if traj.result.is_traced():
        q = traj.result.error_if(traj.q, traj.result != RESULTS.successful)
        return eqx.tree_at(lambda tr: tr.q, traj, q)
    result = code(traj.result)
    if np.any(result != code(RESULTS.successful)):
        from ._checks import known_values
        from ._diagnose import failure_causes

        traj, system = known_values((traj, system))  # under `jax.grad`: the states' numbers
        k = np.argmax(np.ravel(result) != code(RESULTS.successful))
        item = from_code(np.ravel(result)[k])
        what = RESULTS[item].split(";")[0].removeprefix("simulation failed: ")
        time = float(np.ravel(traj.failed_time)[k])
        causes = failure_causes(traj, system, up_to=time)
        if item == RESULTS.newton_failed:
            step = int(np.ravel(traj.failed_step)[k])
            res = float(np.ravel(traj.failed_residual)[k])
            advice = (
                "reduce the step size, loosen rtol/atol or check the model (stiffness, consistent initial conditions)"
            )
            raise SolverError(
                f"{what} at step {step} (t = {time:.6g} s): scaled residual "
                f"{res:.3e} (must be <= 1). " + _cause_text(causes, advice)
            )
        res = np.asarray(traj.constraint_residual).reshape(-1)
        res = res[np.isfinite(res)]
        drift = f"; last finite max |Phi| = {res[-1]:.3e}" if res.size else ""
        advice = "reduce dt0, raise max_steps, loosen rtol/atol or check the model"
        raise SolverError(f"{what} at t = {time:.6g} s{drift}. " + _cause_text(causes, advice))
    return traj


def _cause_text(causes, advice: str) -> str:
    if not causes:
        return f"No specific cause found in the saved states; {advice}."
    return "Likely cause: " + "; ".join(causes) + "."
