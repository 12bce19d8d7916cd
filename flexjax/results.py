r"""What a simulation, a static solve or a contact search ended with: `RESULTS`.

An `equinox.Enumeration`, as `diffrax.RESULTS`: `Trajectory.result` and
`StaticSolution.result` are items of it, so that they survive `jit`, `vmap` and
`run_batch` as arrays, compare with `==`, and carry their message
(`RESULTS[item]`). Inside compiled code a failure raises through `item.error_if`
(`check_result`), outside it as `SolverError` with the numbers of the failure.
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np


class RESULTS(eqx.Enumeration):
    """How a run ended. Items and their integer codes (stable, saved in `.npz` files):

    - `successful` (0).
    - `newton_failed` (1): the Newton iteration of an implicit step of `simulate` did
      not converge.
    - `ode_failed` (2): the ODE solver of `simulate_ode` / `simulate_contact` stopped: a
      diverged state, step-size underflow or `max_steps` reached.
    - `static_failed` (3): Newton did not converge in a load step of `solve_static`.
    - `contact_not_found` (4): `first_contact` gave up at `max_steps` before deciding
      whether contact happens.
    """

    successful = ""
    newton_failed = (
        "simulation failed: the Newton iteration of an implicit step did not converge; rerun with "
        "throw=False and inspect failed_step, failed_time, failed_residual"
    )
    ode_failed = (
        "simulation failed: the ODE solver stopped (diverged state, step-size underflow or max_steps "
        "reached); rerun with throw=False and inspect failed_time"
    )
    static_failed = (
        "solve_static: Newton did not converge in a load step; rerun with throw=False and inspect "
        "error/residual, or use more load steps"
    )
    contact_not_found = (
        "first_contact: gave up at max_steps before the contact; the contact time is unknown, not "
        "infinite (raise max_steps)"
    )


def code(result) -> np.ndarray:
    """The integer code(s) of a `RESULTS` item (an array under `vmap` or `run_batch`)."""
    return np.asarray(result._value)


def from_code(value) -> RESULTS:
    """The `RESULTS` item with integer code(s) `value` (as written by `Trajectory.save`)."""
    return type(RESULTS.successful)(jnp.asarray(value, jnp.int32), RESULTS)
