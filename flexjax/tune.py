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


def baumgarte_objective(system, q0, v0, t1: float, h: float, *, method=None, penalty_margin: float = 0.05,
                        penalty: float = 1e3, drift_scale: float = 1e-6):
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

    method = stability.RK4 if method is None else method
    ts = jnp.linspace(0.0, t1, round(t1 / h) + 1)

    def mean_square_drift(alpha, beta):
        tr = simulate_ode(system, q0, v0, t1, form=UdwadiaKalaba(alpha, beta), solver=RK4(), dt0=h, rtol=None,
                          ts=ts, throw=False, consistent=False)
        return jnp.mean(tr.constraint_residual**2)

    def amplification(alpha, beta):
        return stability.drift_amplification(method, alpha, beta, h, nonholonomic=bool(system.velocity_constraints))

    def loss(log_params):
        alpha, beta = jnp.exp(log_params[0]), jnp.exp(log_params[1])
        excess = jnp.maximum(amplification(alpha, beta) - (1 - penalty_margin), 0.0)
        return mean_square_drift(alpha, beta) / drift_scale + penalty * excess**2

    loss.amplification = amplification
    return loss, mean_square_drift
