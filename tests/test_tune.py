"""`tune.minimize`: box bounds by projection, and the parameter path in the history."""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from flexjax import tune

TARGET = {"a": jnp.array([2.0, -3.0]), "b": jnp.asarray(0.5)}


def loss(p):
    return jnp.sum((p["a"] - TARGET["a"]) ** 2) + (p["b"] - TARGET["b"]) ** 2


def test_bounds_keep_the_path_in_the_box_and_reach_the_constrained_minimum():
    start = {"a": jnp.array([0.0, -4.0]), "b": jnp.asarray(3.0)}  # a[1] starts outside the box: projected
    lower = {"a": jnp.array([-1.0, -1.0]), "b": 1.0}
    upper = {"a": jnp.array([1.0, 1.0]), "b": None}
    best, hist = tune.minimize(loss, start, optax.sgd(0.2), 40, bounds=(lower, {"a": upper["a"], "b": jnp.inf}))
    # the constrained minimum of a separable quadratic is the clipped target
    np.testing.assert_allclose(best["a"], [1.0, -1.0], atol=1e-12)
    assert float(best["b"]) == pytest.approx(1.0, abs=1e-12)
    path = hist["params"]
    assert path["a"].shape == (41, 2) and path["b"].shape == (41,)
    assert np.all(path["a"] >= -1.0) and np.all(path["a"] <= 1.0) and np.all(path["b"] >= 1.0)
    assert float(path["a"][0, 1]) == -1.0 and float(path["b"][0]) == 3.0  # the start, projected
    assert float(path["b"][1]) == pytest.approx(3.0 - 0.2 * 2 * (3.0 - 0.5), rel=1e-15)  # one sgd step, inside
    # the loss history is the loss along the recorded path
    again = [float(loss({"a": path["a"][k], "b": path["b"][k]})) for k in (0, 7, 40)]
    np.testing.assert_allclose(hist["loss"][[0, 7, 40]], again, rtol=1e-14)
    assert hist["grad_norm"].shape == (41,)
    assert hist["grad_norm"][-1] == pytest.approx(np.sqrt(4 * (1**2 + 2**2 + 0.5**2)), rel=1e-9)


def test_without_bounds_the_path_is_gradient_descent():
    start = {"a": jnp.zeros(2), "b": jnp.asarray(0.0)}
    _, hist = tune.minimize(loss, start, optax.sgd(0.1), 2)
    # sgd on the quadratic: p1 = p0 - 0.1 * 2 (p0 - target)
    np.testing.assert_allclose(hist["params"]["a"][1], 0.2 * np.asarray(TARGET["a"]), rtol=1e-14)


@pytest.mark.parametrize(
    "bounds, match",
    [
        ((None,), "pair"),
        (({"a": 0.0}, None), "structure"),
        (({"a": jnp.zeros(3), "b": 0.0}, None), "shape"),
        (({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}), "lower bound above"),
    ],
)
def test_bad_bounds_raise_value_error(bounds, match):
    with pytest.raises(ValueError, match=match):
        tune.minimize(loss, {"a": jnp.zeros(2), "b": jnp.asarray(0.0)}, optax.sgd(0.1), 1, bounds=bounds)
