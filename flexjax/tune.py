r"""Gradient-based tuning with optax: minimize a scalar objective of a simulation.

The objective is any function `loss(params) -> scalar` (build the system from `params`
inside it, as in STYLE.md section 4); gradients flow through the simulation.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax


def minimize(loss, params, optimizer: optax.GradientTransformation, steps: int, *, progress: bool = False):
    """Run `steps` optimizer updates on `params` (a pytree of arrays).

    **Arguments:** `loss(params) -> scalar`; `params` initial pytree; `optimizer` an
    optax transformation (its state is created here and returned, never stored);
    `steps` number of updates; `progress` shows a progress bar.

    **Returns:** `(best_params, history)` where `history` is a dict of numpy arrays:
    `loss` (before each update and after the last one) and `grad_norm`. `best_params`
    are the parameters with the lowest loss seen. **Raises:** `FloatingPointError` if
    the loss or its gradient becomes non-finite (names the step).
    """
    if steps < 1:
        raise ValueError(f"minimize: `steps` must be >= 1, got {steps}.")
    value_and_grad = eqx.filter_jit(eqx.filter_value_and_grad(loss))

    @eqx.filter_jit
    def update(params, opt_state, grads):
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    opt_state = optimizer.init(params)
    losses, norms = [], []
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
        if value < best_loss:
            best, best_loss = params, value
        if k < steps:
            params, opt_state = update(params, opt_state, grads)
    return best, {"loss": np.asarray(losses), "grad_norm": np.asarray(norms)}


def central_difference_check(loss, params, direction, eps: float = 1e-5) -> float:
    r"""Relative error between the autodiff directional derivative $\nabla L \cdot d$ and
    the central difference $(L(p + \epsilon d) - L(p - \epsilon d)) / 2\epsilon$."""
    grad = eqx.filter_grad(loss)(params)
    ad = sum(jnp.vdot(g, d) for g, d in zip(jax.tree_util.tree_leaves(grad), jax.tree_util.tree_leaves(direction)))
    shift = lambda s: jax.tree_util.tree_map(lambda p, d: p + s * d, params, direction)
    fd = (loss(shift(eps)) - loss(shift(-eps))) / (2 * eps)
    return float(jnp.abs(ad - fd) / jnp.maximum(jnp.abs(fd), jnp.finfo(jnp.float64).tiny))
