"""Redundant constraints in the index-3 solver: a rigid parallelogram linkage with a
third crank (Grübler count 0, true mobility 1, `Phi_q` rank deficient by one) against
its closed-form one-degree-of-freedom motion."""

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexjax as fj

R, M_CRANK, M_COUPLER, G, THETA0 = 0.5, 1.0, 2.0, 9.81, 0.6


def linkage():
    """Three parallel cranks (pivots at x = 0, 1, 2) carrying one coupler of length 2."""
    cranks = [fj.RigidBar2D(M_CRANK, R) for _ in range(3)]
    coupler = fj.RigidBar2D(M_COUPLER, 2.0)
    joints = [fj.RevoluteJoint(k, (0.0, 0.0), None, (float(k), 0.0)) for k in range(3)]
    joints += [fj.RevoluteJoint(k, (R, 0.0), 3, (float(k), 0.0)) for k in range(3)]
    system = fj.System(cranks + [coupler], joints, [fj.Gravity((0.0, -G))])
    s, c = np.sin(THETA0), np.cos(THETA0)
    tip = lambda k: [k + R * s, -R * c]
    q0 = jnp.array(sum(([float(k), 0.0] + tip(k) for k in range(3)), []) + tip(0) + tip(2))
    return system, q0


def exact_angle(t):
    r"""$\ddot\theta = -g\sin\theta\,(\tfrac32 m_k + m_c)/(r(m_k + m_c))$: the coupler
    translates on a circle, each crank turns about its pivot."""
    k = G * (1.5 * M_CRANK + M_COUPLER) / (R * (M_CRANK + M_COUPLER))
    sol = solve_ivp(
        lambda _, y: [y[1], -k * np.sin(y[0])],
        [0, t[-1]],
        [THETA0, 0.0],
        t_eval=t,
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    return sol.y[0]


@pytest.fixture(scope="module")
def model():
    return linkage()


def test_constraint_jacobian_is_rank_deficient(model):
    system, q0 = model
    Phi_q = np.asarray(system.constraints_q(q0, 0.0))
    assert Phi_q.shape == (16, 16)
    assert np.linalg.matrix_rank(Phi_q, tol=1e-9) == 15


def test_least_squares_newton_follows_closed_form(model):
    system, q0 = model
    errors = []
    for h in (2e-3, 1e-3):
        tr = fj.simulate(
            system,
            q0,
            jnp.zeros(16),
            t1=1.0,
            dt=h,
            save_every=round(0.05 / h),
            solver=fj.GeneralizedAlpha(rho_inf=0.8, redundant=True, newton="full"),
        )
        theta = np.arctan2(np.asarray(tr.q[:, 2]), -np.asarray(tr.q[:, 3]))
        errors.append(np.max(np.abs(theta - exact_angle(np.asarray(tr.t)))))
        assert float(tr.constraint_residual.max()) < 1e-12  # full Newton: |Phi| at rounding level
    assert errors[1] < 2e-4
    assert 3.5 < errors[0] / errors[1] < 4.5  # second order


def test_plain_newton_refuses_redundant_constraints(model):
    # refused before the run (the plain solve would return wrong multipliers and motion)
    system, q0 = model
    with pytest.raises(
        ValueError,
        match=r"constraints are redundant: Phi_q has rank 15 of its 16 rows.*GeneralizedAlpha\(redundant=True\)",
    ):
        fj.simulate(system, q0, jnp.zeros(16), t1=0.01, dt=1e-3, solver=fj.GeneralizedAlpha(rho_inf=0.8))
