"""`flexjax.solvers._dense`: batched Gauss-Jordan against LAPACK, pivoting, singular
matrices, and derivatives of `solve`. The multi-device dispatch itself runs in
tests/test_sharding.py (it needs a fresh interpreter with forced host devices)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax  # noqa: F401  (float64)
from flexjax.solvers import _dense as dense


def saddle_point(key, n=6, m=2):
    """[[K, G^T], [G, 0]]: a zero diagonal block, so elimination needs pivoting."""
    k1, k2 = jax.random.split(key)
    A = jax.random.normal(k1, (n, n))
    G = jax.random.normal(k2, (m, n))
    return jnp.block([[A @ A.T + n * jnp.eye(n), G.T], [G, jnp.zeros((m, m))]])


@pytest.mark.parametrize("n", [5, 40])  # unrolled and looped elimination
def test_gauss_jordan_equals_lapack_on_a_batch(n):
    A = jax.random.normal(jax.random.PRNGKey(0), (7, n, n))
    B = jax.random.normal(jax.random.PRNGKey(1), (7, n, 3))
    np.testing.assert_allclose(jax.jit(dense.gauss_jordan)(A, B), np.linalg.solve(A, B), rtol=1e-9, atol=1e-11)


def test_gauss_jordan_pivots():
    keys = jax.random.split(jax.random.PRNGKey(2), 4)
    K = jax.jit(jax.vmap(saddle_point))(keys)
    perm = jnp.eye(8)[jnp.array([3, 0, 7, 1, 6, 2, 5, 4])]  # zero diagonal everywhere
    A = jnp.concatenate([K, perm[None]])
    X = jax.jit(dense.gauss_jordan)(A, jnp.broadcast_to(jnp.eye(8), A.shape))
    np.testing.assert_allclose(X, np.linalg.inv(A), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(X[-1], perm.T)


def test_gauss_jordan_singular_is_not_finite():
    A = jnp.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    X = jax.jit(dense.gauss_jordan)(A, jnp.broadcast_to(jnp.eye(2), A.shape))
    assert not np.all(np.isfinite(X[0]))
    np.testing.assert_allclose(X[1], np.diag([0.5, 1.0]))


def test_inverse_and_solve_vmapped_equal_lapack():
    keys = jax.random.split(jax.random.PRNGKey(3), 5)
    A = jax.jit(jax.vmap(saddle_point))(keys)
    b = jax.random.normal(jax.random.PRNGKey(4), (5, 8))
    inv, sol, shared = jax.jit(
        lambda A, b: (
            jax.vmap(dense.inverse)(A),
            jax.vmap(dense.solve)(A, b),
            jax.vmap(dense.solve, (None, 0))(A[0], b),
        )
    )(A, b)
    np.testing.assert_allclose(inv, np.linalg.inv(A), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sol, np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10)
    # one matrix, many right-hand sides
    np.testing.assert_allclose(shared, np.linalg.solve(A[0], b.T).T, rtol=1e-10)


def test_solve_derivatives_match_the_closed_form():
    """d(A^{-1} b) = A^{-1}(db - dA A^{-1} b), in forward and reverse mode, batched too."""
    A = jax.jit(saddle_point)(jax.random.PRNGKey(5))
    b = jax.random.normal(jax.random.PRNGKey(6), (8,))
    dA = jax.random.normal(jax.random.PRNGKey(7), (8, 8))
    db = jax.random.normal(jax.random.PRNGKey(8), (8,))
    x = np.linalg.solve(A, b)
    exact = np.linalg.solve(A, db - dA @ x)
    _, tangent = jax.jvp(dense.solve, (A, b), (dA, db))
    np.testing.assert_allclose(tangent, exact, rtol=1e-10)
    w = jax.random.normal(jax.random.PRNGKey(9), (8,))
    gA, gb = jax.grad(lambda A, b: w @ dense.solve(A, b), argnums=(0, 1))(A, b)
    lam = np.linalg.solve(A.T, w)
    np.testing.assert_allclose(gb, lam, rtol=1e-10)
    np.testing.assert_allclose(gA, -np.outer(lam, x), rtol=1e-10, atol=1e-13)
    gb_batch = jax.vmap(jax.grad(lambda b: w @ dense.solve(A, b)))(jnp.stack([b, 2 * b]))
    np.testing.assert_allclose(gb_batch, np.stack([lam, lam]), rtol=1e-10)


def test_a_batch_on_one_cpu_device_makes_no_batched_lapack_call():
    """Two independent batched LAPACK calls run at once can deadlock XLA's CPU thread
    pool: a batch is factored one sample at a time (module docstring)."""
    keys = jax.random.split(jax.random.PRNGKey(10), 4)
    A = jax.jit(jax.vmap(saddle_point))(keys)
    b = jax.random.normal(jax.random.PRNGKey(11), (4, 8))

    def both(A, b):  # two independent batched factorizations, as in the deadlocked program
        return jax.vmap(dense.inverse)(A), jax.vmap(dense.solve)(A, b), jax.vmap(dense.lu_factor)(2.0 * A)

    hlo = jax.jit(both).lower(A, b).as_text()
    calls = [line for line in hlo.splitlines() if "lapack_dgetrf" in line]
    assert len(calls) >= 3 and all('num_batch_dims = "0"' in line for line in calls)  # one matrix per call
    inv, sol, (lu, piv) = jax.jit(both)(A, b)
    np.testing.assert_allclose(inv, np.linalg.inv(A), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sol, np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10)
    for k in range(4):
        lu_k, piv_k = jax.scipy.linalg.lu_factor(2.0 * A[k])
        np.testing.assert_array_equal(lu[k], lu_k)
        np.testing.assert_array_equal(piv[k], piv_k)
