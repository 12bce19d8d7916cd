r"""Gradient-based tuning with optax: minimize a scalar objective of a simulation.

The objective is any function `loss(params) -> scalar` (build the system from `params`
inside it, as in STYLE.md section 4); gradients flow through the simulation.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from ._emitter import checked_jit
from ._gc import gc_paused


def _box(bounds, params):
    """`(lower, upper)` as pytrees of arrays shaped like `params` (`None`: unbounded)."""
    if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
        raise ValueError(f"minimize: `bounds` must be a pair (lower, upper), got {type(bounds).__name__}.")
    treedef = jax.tree_util.tree_structure(params)
    out = []
    for side, fill, name in ((bounds[0], -np.inf, "lower"), (bounds[1], np.inf, "upper")):
        if side is None:
            side = jax.tree_util.tree_map(lambda p, fill=fill: fill, params)
        if jax.tree_util.tree_structure(side) != treedef:
            raise ValueError(
                f"minimize: `bounds` {name} must have the structure of the parameters, "
                f"got {jax.tree_util.tree_structure(side)} for {treedef}."
            )
        leaves = []
        for p, b in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(side), strict=True):
            b = jnp.asarray(b, jnp.result_type(p))
            try:
                leaves.append(jnp.broadcast_to(b, jnp.shape(p)))
            except ValueError:
                raise ValueError(
                    f"minimize: `bounds` {name} leaf of shape {jnp.shape(b)} does not fit the parameter of shape "
                    f"{jnp.shape(p)}."
                ) from None
        out.append(jax.tree_util.tree_unflatten(treedef, leaves))
    lower, upper = out
    bad = [
        bool(jnp.any(lo > up))
        for lo, up in zip(jax.tree_util.tree_leaves(lower), jax.tree_util.tree_leaves(upper), strict=True)
    ]
    if any(bad):
        raise ValueError("minimize: `bounds` has a lower bound above its upper bound.")
    return lower, upper


def minimize(loss, params, optimizer: optax.GradientTransformation, steps: int, *, bounds=None, progress: bool = False):
    r"""Run `steps` optimizer updates on `params` (a pytree of arrays).

    With `bounds`, each update is followed by the projection onto the box
    $\ell \le p \le u$ (projected gradient descent: `jnp.clip` leaf by leaf); the starting
    point is projected too.

    **Arguments:**

    - `loss(params) -> scalar`.
    - `params`: the initial pytree of arrays.
    - `optimizer`: an optax transformation (its state is created here and returned,
      never stored).
    - `steps`: number of updates (>= 1).
    - `bounds`: `(lower, upper)`, pytrees with the structure of `params` whose leaves
      broadcast to the parameters' shapes; `None` for a side (or `+-inf` in a leaf)
      leaves it unbounded. Default: no bounds.
    - `progress`: show a progress bar.

    **Returns:** `(best_params, history)`. `best_params` are the parameters with the lowest
    loss seen. `history` is a dict: `params`, the parameter path (a pytree like
    `params` whose numpy leaves have a leading axis of `steps + 1`: the parameters at
    which each loss was evaluated), `loss` (before each update and after the last one)
    and `grad_norm` (global norm of the raw gradient there), numpy arrays of length
    `steps + 1`.

    **Raises:** `ValueError` for bad `steps` or `bounds`; `FloatingPointError` if the loss
    or its gradient becomes non-finite (names the step).
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"minimize: `steps` must be an int >= 1, got {steps!r}.")
    # the first call traces the loss and its gradient: no garbage collection meanwhile
    # compiled with XLA's older CPU emitter unless it compares with a maximum (flexjax._emitter)
    value_and_grad = gc_paused(checked_jit(eqx.filter_value_and_grad(loss)))
    if bounds is not None:
        lower, upper = _box(bounds, params)
        project = eqx.filter_jit(lambda p: jax.tree_util.tree_map(jnp.clip, p, lower, upper))
        params = project(params)
    else:
        project = None

    @eqx.filter_jit
    def update(params, opt_state, grads):
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    opt_state = optimizer.init(params)
    losses, norms, path = [], [], []
    best, best_loss = params, np.inf
    iterator = range(steps + 1)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="tuning", leave=False)
    for k in iterator:
        value, grads = value_and_grad(params)
        gnorm = float(optax.tree.norm(grads))
        value = float(value)
        if not (np.isfinite(value) and np.isfinite(gnorm)):
            raise FloatingPointError(f"minimize: non-finite loss ({value}) or gradient norm ({gnorm}) at step {k}.")
        losses.append(value)
        norms.append(gnorm)
        path.append(jax.tree_util.tree_map(np.asarray, params))
        if value < best_loss:
            best, best_loss = params, value
        if k < steps:
            params, opt_state = update(params, opt_state, grads)
            if project is not None:
                params = project(params)
    params_path = jax.tree_util.tree_map(lambda *xs: np.stack(xs), *path)
    return best, {"params": params_path, "loss": np.asarray(losses), "grad_norm": np.asarray(norms)}


def central_difference_check(loss, params, direction, eps: float = 1e-5) -> float:
    r"""Relative error between the autodiff directional derivative $\nabla L \cdot d$ and
    the central difference $(L(p + \epsilon d) - L(p - \epsilon d)) / 2\epsilon$."""
    grad = eqx.filter_grad(loss)(params)
    ad = sum(
        jnp.vdot(g, d)
        for g, d in zip(jax.tree_util.tree_leaves(grad), jax.tree_util.tree_leaves(direction), strict=True)
    )
    shift = lambda s: jax.tree_util.tree_map(lambda p, d: p + s * d, params, direction)
    fd = (loss(shift(eps)) - loss(shift(-eps))) / (2 * eps)
    return float(jnp.abs(ad - fd) / jnp.maximum(jnp.abs(fd), jnp.finfo(jnp.float64).tiny))


def baumgarte_objective(
    system,
    q0,
    v0,
    t1: float,
    h: float,
    *,
    method=None,
    penalty_margin: float = 0.05,
    penalty: float = 1e3,
    drift_scale: float = 1e-6,
):
    r"""Objective for tuning Baumgarte parameters on a real simulation.

    $J(\log\alpha, \log\beta) = \frac{1}{s}\,\overline{|\Phi|^2} + \mu \max(\rho - (1 - m), 0)^2$:
    the mean square position-constraint residual over a fixed-step run of the
    Udwadia-Kalaba form (`method`'s diffrax solver, default RK4, step `h`, saved every
    step), divided by `drift_scale` $s$ (m²), plus a penalty keeping the pair inside the
    stability region: $\rho$ is the largest $|R(h\lambda)|$ over the holonomic drift roots
    and, when the system has nonholonomic rows, the root $-2\alpha$.

    **Returns:** `(loss, mean_square_drift)`: `loss(log_params)` for `minimize`, and
    `mean_square_drift(alpha, beta)` in m².
    """
    from .analysis import stability
    from .solvers import RK4, UdwadiaKalaba, simulate_ode

    method = stability.RK4_TABLEAU if method is None else method
    ts = jnp.linspace(0.0, t1, round(t1 / h) + 1)

    def mean_square_drift(alpha, beta):
        tr = simulate_ode(
            system,
            q0,
            v0,
            t1,
            form=UdwadiaKalaba(alpha, beta),
            solver=RK4(),
            dt0=h,
            rtol=None,
            ts=ts,
            throw=False,
            consistent=False,
        )
        return jnp.mean(tr.constraint_residual**2)

    def amplification(alpha, beta):
        return stability.drift_amplification(method, alpha, beta, h, nonholonomic=bool(system.velocity_constraints))

    def loss(log_params):
        alpha, beta = jnp.exp(log_params[0]), jnp.exp(log_params[1])
        excess = jnp.maximum(amplification(alpha, beta) - (1 - penalty_margin), 0.0)
        return mean_square_drift(alpha, beta) / drift_scale + penalty * excess**2

    loss.amplification = amplification
    return loss, mean_square_drift
