r"""Baumgarte stability regions (seed 003 §3): admissible $(\alpha, \beta)$ for RK4 and diffrax solvers.

The constraint error of a Baumgarte-stabilized run obeys $\ddot e + 2\alpha\dot e + \beta^2 e = 0$;
integrated by a one-step method with stability function $R$ at step $h$, it stays bounded
when $|R(h\lambda_\pm)| \le 1$ for both roots. This experiment maps the admissible pairs
for classic RK4 (the paper's integrator) and for diffrax's Tsit5, Dopri5 and Heun at the
step of the mobile-robot case, recommends a pair (fastest continuous drift decay with a
20 % margin) and the deadbeat pair (drift roots on a zero of R), classifies the pairs
of the paper's Table 1, and checks the predicted per-step drift factor against one
actual step of each integrator on the drift equation.

Step: the paper integrates 20 s with RK4 at a fixed step; its Table 1 (garbled in the
seed text) reads "步长 ... h=0.1", so h = 0.1 s. The region scales as 1/h: at another
step multiply every pair by 0.1 / h.
"""

import pathlib
import re

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import flexjax  # noqa: F401  (float64)
from flexjax.analysis import stability as st
from flexjax.plotting import plot_series

NAME = "baumgarte_region"
DESCRIPTION = "Baumgarte (alpha, beta) stability regions for RK4, Tsit5, Dopri5, Heun; recommended pair (seed 003)"

H = 0.1  # s, the paper's fixed RK4 step (Table 1)
MARGIN = 0.2  # recommended pair stays admissible at the step H / (1 - MARGIN)
T_END = 20.0  # s, the paper's run length (drift histories)
# Table 1 of the paper as read from the garbled seed: pairs it calls stable / unstable
PAPER_STABLE = ((0.001, 2.0), (0.01, 200.0), (0.1, 3.0), (1.0, 300.0))
PAPER_UNSTABLE = ((1.0, 1.0), (10.0, 100.0))
DIFFRAX_SOLVERS = {"tsit5": diffrax.Tsit5(), "dopri5": diffrax.Dopri5(), "heun": diffrax.Heun()}


def rk4_drift_step(alpha: float, beta: float, h: float) -> np.ndarray:
    r"""One-step matrix $P$ of classic RK4 (k1..k4 written out, no tableau) on the drift
    equation in first-order form $y = (e, \dot e)$, $\dot y = J y$: $y_{n+1} = P y_n$."""
    J = np.array([[0.0, 1.0], [-(beta**2), -2.0 * alpha]])
    f = lambda y: J @ y

    def step(y):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    return np.stack([step(np.array([1.0, 0.0])), step(np.array([0.0, 1.0]))], axis=1)


def diffrax_drift_step(solver, alpha: float, beta: float, h: float) -> np.ndarray:
    """One-step matrix of a diffrax solver (one fixed step of size h) on the drift equation."""
    J = jnp.array([[0.0, 1.0], [-(beta**2), -2.0 * alpha]])
    return np.asarray(_diffrax_step_matrix(solver, J, jnp.asarray(h, float)))


@eqx.filter_jit
def _diffrax_step_matrix(solver, J, h):
    # solver.init + solver.step: exactly the step diffeqsolve takes, without its loop to compile
    term = diffrax.ODETerm(lambda t, y, args: args @ y)

    def step(y0):
        state = solver.init(term, 0.0, h, y0, J)
        return solver.step(term, 0.0, h, y0, J, state, made_jump=False)[0]

    return jax.vmap(step, out_axes=1)(jnp.eye(2))  # columns: steps from the unit vectors


def spectral_radius(P: np.ndarray) -> float:
    """Largest eigenvalue modulus of the one-step matrix: the measured drift factor per step.

    At critical damping the double root makes P defective, so its computed eigenvalues
    carry an error of about sqrt(round-off) (~1e-8); `step_matrix_error` is the sharp check.
    """
    return float(np.max(np.abs(np.linalg.eigvals(P))))


def step_matrix_error(method: st.ExplicitRungeKutta, P: np.ndarray, alpha: float, beta: float, h: float) -> float:
    r"""Relative max-norm difference between a measured one-step matrix P and
    $R(hJ) = \sum_k \gamma_k (hJ)^k$ from the method's stability polynomial."""
    hJ = h * np.array([[0.0, 1.0], [-(beta**2), -2.0 * alpha]])
    R, term = np.zeros((2, 2)), np.eye(2)
    for g in np.asarray(method.coefficients()):
        R, term = R + g * term, term @ hJ
    return float(np.max(np.abs(P - R)) / np.max(np.abs(R)))


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Map the regions, recommend pairs, write plots, `pairs.csv` and `drift.npz`.

    **Arguments:** `out_dir` (created if missing); `quick`: coarser plot grids;
    `progress`: unused (nothing long-running).

    **Returns:** the summary: `h`, `margin`, `alpha_recommended`, `beta_recommended`,
    `decay_rate_recommended`, `amplification_recommended` (discrete decay factor per
    step, predicted), `amplification_measured` and `step_matrix_error` (one actual RK4
    step on the drift equation against $R(hJ)$), RK4 `real_axis_limit`
    and `imaginary_axis_limit`, `alpha_extent`, `beta_max_admissible`, the same numbers
    per diffrax solver (`tsit5_*`, `dopri5_*`, `heun_*`), the classification of the
    paper's pairs, the deadbeat pair (drift roots on a zero of $R$) and the drift of
    the RK4 runs after 10 steps and at the end.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    n_grid = 151 if quick else 401
    rk4 = st.RK4_TABLEAU
    rec = st.recommend(rk4, H, MARGIN)
    alpha_extent = -st.leftmost_point(rk4).real / H
    bnd = st.region_boundary(rk4, H, np.linspace(0.0, alpha_extent, 801))
    # a pair just outside: the recommended one scaled past the region's tip
    outside = (1.05 * rec.alpha / (1 - MARGIN), 1.05 * rec.beta / (1 - MARGIN))
    summary = {
        "h": H,
        "margin": MARGIN,
        "alpha_recommended": rec.alpha,
        "beta_recommended": rec.beta,
        "decay_rate_recommended": rec.decay_rate,
        "amplification_recommended": rec.amplification,
        "discrete_decay_rate_recommended": rec.discrete_decay_rate,
        "amplification_measured": spectral_radius(rk4_drift_step(rec.alpha, rec.beta, H)),
        "step_matrix_error": step_matrix_error(rk4, rk4_drift_step(rec.alpha, rec.beta, H), rec.alpha, rec.beta, H),
        "real_axis_limit": st.real_axis_limit(rk4),
        "imaginary_axis_limit": st.imaginary_axis_limit(rk4),
        "alpha_extent": alpha_extent,
        "beta_max_admissible": float(np.nanmax(bnd.beta_upper)),
        "alpha_outside": outside[0],
        "beta_outside": outside[1],
        "amplification_outside": float(st.drift_amplification(rk4, *outside, H)),
        "amplification_outside_measured": spectral_radius(rk4_drift_step(*outside, H)),
    }

    deadbeat = st.deadbeat_pairs(rk4, H)[0]  # drift roots on the zero of R nearest the origin
    summary |= {
        "alpha_deadbeat": deadbeat[0],
        "beta_deadbeat": deadbeat[1],
        "amplification_deadbeat": float(st.drift_amplification(rk4, *deadbeat, H)),
        "deadbeat_within_margin": int(bool(st.is_admissible(rk4, *(np.array(deadbeat) / (1 - MARGIN)), H))),
    }
    pairs = {"recommended": (rec.alpha, rec.beta), "outside": outside, "deadbeat": deadbeat}
    st.plot_region(
        rk4,
        H,
        out_dir / "region_rk4.png",
        margin=MARGIN,
        n=n_grid,
        pairs={"outside": outside, "paper (1, 1)": PAPER_UNSTABLE[0], "paper (0.1, 3)": PAPER_STABLE[2]},
    )
    st.plot_stability_region(
        rk4,
        out_dir / "stability_plane_rk4.png",
        h=H,
        pairs=pairs,
        title=rf"RK4 $|R(z)| \leq 1$ with $h\lambda_\pm$ of the pairs, h = {H} s",
    )

    methods = [rk4]
    for key, solver in DIFFRAX_SOLVERS.items():
        m = st.from_diffrax(solver)
        methods.append(m)
        r = st.recommend(m, H, MARGIN)
        P = diffrax_drift_step(solver, r.alpha, r.beta, H)
        summary |= {
            f"{key}_real_axis_limit": st.real_axis_limit(m),
            f"{key}_imaginary_axis_limit": st.imaginary_axis_limit(m),
            f"{key}_alpha_recommended": r.alpha,
            f"{key}_beta_recommended": r.beta,
            f"{key}_amplification_recommended": r.amplification,
            f"{key}_amplification_measured": spectral_radius(P),
            f"{key}_step_matrix_error": step_matrix_error(m, P, r.alpha, r.beta, H),
        }
        st.plot_region(m, H, out_dir / f"region_{key}.png", margin=MARGIN, n=n_grid)
    st.plot_stability_region(
        methods, out_dir / "stability_planes.png", title=r"stability regions $|R(z)| \leq 1$ (filled: RK4)"
    )

    # the paper's Table 1 pairs under this (SPEC) form of the drift equation
    rows, stable_ok, unstable_ok = [], 0, 0
    for verdict, group in (("stable", PAPER_STABLE), ("unstable", PAPER_UNSTABLE)):
        for alpha, beta in group:
            ok = bool(st.is_admissible(rk4, alpha, beta, H))
            rho = float(st.drift_amplification(rk4, alpha, beta, H))
            stable_ok += ok and verdict == "stable"
            unstable_ok += (not ok) and verdict == "unstable"
            rows.append(f"{alpha},{beta},{verdict},{int(ok)},{rho:.6g}")
    (out_dir / "pairs.csv").write_text(
        "alpha,beta,paper_verdict,admissible_rk4,amplification\n" + "\n".join(rows) + "\n"
    )
    summary |= {"paper_stable_pairs_admissible": stable_ok, "paper_unstable_pairs_inadmissible": unstable_ok}

    # drift histories with RK4 at H: e(0) = 1, e'(0) = 0 (the linear drift equation itself)
    nsteps = round(T_END / H)
    t = H * np.arange(nsteps + 1)
    histories = {}
    for label, (alpha, beta) in (pairs | {"paper (1, 1)": PAPER_UNSTABLE[0]}).items():
        P, y, e = rk4_drift_step(alpha, beta, H), np.array([1.0, 0.0]), [1.0]
        for _ in range(nsteps):
            y = P @ y
            e.append(y[0])
        histories[label] = np.abs(np.array(e))
    summary |= {
        "drift_final_recommended": float(histories["recommended"][-1]),
        "drift_final_outside": float(histories["outside"][-1]),
        "drift_after_10_steps_recommended": float(histories["recommended"][10]),
        "drift_after_10_steps_deadbeat": float(histories["deadbeat"][10]),
        "t_end": T_END,
    }
    np.savez(out_dir / "drift.npz", t=t, **{re.sub(r"\W+", "_", k).strip("_"): v for k, v in histories.items()})
    floor = 1e-20  # the deadbeat run reaches round-off in two steps
    plot_series(
        t,
        [np.maximum(v, floor) for v in histories.values()],
        list(histories),
        out_dir / "drift_rk4.png",
        ylabel="|e| (drift, e(0) = 1)",
        title=f"drift equation integrated by RK4, h = {H} s",
        logy=True,
    )
    return summary
