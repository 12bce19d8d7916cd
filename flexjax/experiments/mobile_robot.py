r"""Seed 003: Udwadia-Kalaba dynamics of a differential-drive robot, three Baumgarte choices.

The robot (`flexjax.models.mobile_robot`: body (x, y, θ), lateral no-slip, a point
0.2 m ahead of the axle driven along x = 3 sin t, y = −4 cos t) is integrated for 20 s
with classic RK4 at the seed's fixed step h = 0.1 s, in Udwadia-Kalaba form, with
(1) no correction, (2) a pair inside the RK4 stability region, (3) a pair outside it.

The program rows are holonomic (drift $\ddot e + 2\alpha\dot e + \beta^2 e = 0$, roots
$-\alpha \pm \sqrt{\alpha^2-\beta^2}$); the no-slip row is nonholonomic (drift
$\dot\psi + 2\alpha\psi = 0$, root $-2\alpha$). A pair is admissible when $|R(h\lambda)| \le 1$
for all three roots. The stable pair is `analysis.stability.recommend` for RK4 at h with
a 50 % margin (the region is exact for the frozen linear drift equation only; the robot's
is time-varying), reduced (same ratio) until the first-order root is inside the region
with the same margin. The unstable pair keeps that alpha and raises beta until the complex
holonomic roots reach $|R(h\lambda)| = 1.03$ (just outside: the drift grows by about 3 %
per step, so the run stays finite and the growth is visible). The pair with the smallest
actual drift inside the region is found by gradient descent in `baumgarte_tune`.
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

import flexjax
from flexjax import models, plotting
from flexjax.analysis import stability
from flexjax.plotting import plot_series

NAME = "mobile_robot"
DESCRIPTION = "seed 003: Udwadia-Kalaba mobile robot, RK4, no / stable / unstable Baumgarte correction"

H = 0.1  # s, the seed's RK4 step
T_END, T_END_QUICK = 20.0, 6.0  # s
MARGIN = 0.5
UNSTABLE_AMPLIFICATION = 1.01
LOOKAHEAD = 0.2  # m
DIVERGED = 1.0  # m: a constraint error beyond this (or NaN) counts as divergence


def amplification(method, alpha, beta, h):
    """Largest |R(h lambda)| over the holonomic roots and the nonholonomic root -2 alpha."""
    return float(stability.drift_amplification(method, alpha, beta, h, nonholonomic=True))


def choose_pairs(h=H, margin=MARGIN):
    """Stable and unstable (alpha, beta) for RK4 at step `h` (see the module docstring)."""
    rk4 = stability.RK4_TABLEAU
    rec = stability.recommend(rk4, h, margin)
    a, b = rec.alpha, rec.beta
    # first-order root -2 alpha must satisfy the same margin: |R(-2 alpha h / (1 - m))| <= 1
    limit = -stability.real_axis_limit(rk4) * (1 - margin) / (2 * h)
    if a > limit:
        a, b = limit, b * limit / a
    # unstable: same alpha, beta raised until the complex holonomic roots leave the region
    lo, hi = b, 100.0 * b
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if amplification(rk4, a, mid, h) <= UNSTABLE_AMPLIFICATION:
            lo = mid
        else:
            hi = mid
    return (a, b), (a, lo)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Three runs (none / stable / unstable), plots of the seed's Figs. 3-7, data.

    **Returns:** summary with `h`, `alpha_stable`, `beta_stable`, `alpha_unstable`,
    `beta_unstable`, `constraint_error_max_uncorrected|stable|unstable` (max |program
    constraint| = driven-point error, m; for a diverging run the largest value below
    1 m), `diverged_*` (1 or 0) and `divergence_time_*` (s; `t_end` if none),
    `nonholonomic_error_max_*` (max |lateral slip velocity|, m/s),
    `path_error_max_stable` (m), amplification factors.
    """
    out_dir = pathlib.Path(out_dir)
    t_end = T_END_QUICK if quick else T_END
    system = models.mobile_robot(lookahead=LOOKAHEAD)
    q0, v0 = models.mobile_robot_state(lookahead=LOOKAHEAD)
    stable, unstable = choose_pairs()
    cases = {"uncorrected": (0.0, 0.0), "stable": stable, "unstable": unstable}
    ts = jnp.linspace(0.0, t_end, round(t_end / H) + 1)
    runs, summary = {}, {"h": H, "t_end": t_end, "lookahead": LOOKAHEAD}
    for name, (alpha, beta) in cases.items():
        tr = flexjax.simulate_ode(
            system,
            q0,
            v0,
            t_end,
            form=flexjax.UdwadiaKalaba(alpha, beta),
            solver=flexjax.RK4(),
            dt0=H,
            rtol=None,
            ts=ts,
            throw=False,
        )
        runs[name] = tr
        tr.save(out_dir / f"trajectory_{name}.npz")
        res = np.asarray(tr.constraint_residual)
        slip = np.abs(np.asarray(jax_nonholonomic(system, tr)))
        finite = np.isfinite(res) & (res < DIVERGED)
        # a diverging run is reported, not hidden: largest error before it left 1 m, and when
        summary[f"constraint_error_max_{name}"] = float(np.max(np.where(finite, res, 0.0)))
        summary[f"nonholonomic_error_max_{name}"] = float(np.max(np.where(np.isfinite(slip) & finite, slip, 0.0)))
        summary[f"diverged_{name}"] = float(not finite.all())
        summary[f"divergence_time_{name}"] = (
            float(np.asarray(ts)[np.argmin(finite)]) if not finite.all() else float(t_end)
        )
        summary[f"amplification_{name}"] = amplification(stability.RK4_TABLEAU, alpha, beta, H)
    summary.update(alpha_stable=stable[0], beta_stable=stable[1], alpha_unstable=unstable[0], beta_unstable=unstable[1])
    err = {k: np.asarray(models.path_error(tr.q, tr.t, lookahead=LOOKAHEAD)) for k, tr in runs.items()}
    summary["path_error_max_stable"] = float(np.max(np.abs(err["stable"])))
    summary["drift_reduction_stable"] = (
        summary["constraint_error_max_uncorrected"] / summary["constraint_error_max_stable"]
    )
    _plots(out_dir, runs, err, np.asarray(ts))
    return summary


def jax_nonholonomic(system, tr):
    """Lateral slip velocity along a trajectory."""
    return jax.vmap(system.nonholonomic)(tr.q, tr.v, tr.t)


def _plots(out_dir, runs, err, t):
    labels = list(runs)
    # samples after a divergence (error >= 1 m) are not drawn, so the ellipse stays readable
    ok = {k: np.all(np.abs(e) < DIVERGED, axis=1, keepdims=True) for k, e in err.items()}
    point = {k: np.where(ok[k], err[k] + np.stack([3 * np.sin(t), -4 * np.cos(t)], axis=1), np.nan) for k in runs}
    plot_series(
        t,
        [point[k][:, 0] for k in labels] + [3 * np.sin(t)],
        labels + ["theory 3 sin t"],
        out_dir / "fig3_x.png",
        ylabel="x [m]",
        title="driven point, x (Fig. 3)",
    )
    plot_series(
        t,
        [np.abs(err[k][:, 0]) + 1e-16 for k in labels],
        labels,
        out_dir / "fig4_x_error.png",
        ylabel="|x - 3 sin t| [m]",
        title="x error (Fig. 4)",
        logy=True,
    )
    plot_series(
        t,
        [point[k][:, 1] for k in labels] + [-4 * np.cos(t)],
        labels + ["theory -4 cos t"],
        out_dir / "fig5_y.png",
        ylabel="y [m]",
        title="driven point, y (Fig. 5)",
    )
    plot_series(
        t,
        [np.abs(err[k][:, 1]) + 1e-16 for k in labels],
        labels,
        out_dir / "fig6_y_error.png",
        ylabel="|y + 4 cos t| [m]",
        title="y error (Fig. 6)",
        logy=True,
    )

    fig, ax = plotting.subplots(figsize=(5, 6))
    for k in labels:
        ax.plot(point[k][:, 0], point[k][:, 1], label=k)
    ax.plot(3 * np.sin(t), -4 * np.cos(t), "k--", label="theory")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("path of the driven point (Fig. 7)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "fig7_path.png", dpi=120)
    plotting.close(fig)
