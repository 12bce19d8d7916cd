r"""Critical joint stiffness of the FLFJ arm (seed 000, section 3.3, Figs. 8-10, Table 6).

The joint may be treated as rigid when the first-frequency ratio
$r = f_{FLFJ}/f_{cant} = \gamma_2^2/\gamma_1^2$ exceeds $r_c$ (eq. 50-54). Because $k$
and $n = EI/l$ enter eq. 53 only as $k/n$, the critical stiffness is exactly linear,
$k_c = P(r_c)\,n$, and $P$ has a closed form: eq. 53 solved for $k/n$ at
$\gamma_2 = \gamma_1\sqrt{r_c}$ (`flexjax.analysis.critical_stiffness_coefficient`).

The paper's values P = 37.1361, 63.8008, 197.1245 (r_c = 0.95, 0.97, 0.99) were found
numerically. The run also finds $k_c$ the paper's way (bisection on $r(k, n) = r_c$ for
each n, then a straight-line fit of $k_c$ against n, Fig. 9) to show that the closed form
and the numerical route agree, and evaluates P with the rounded root
$\gamma_1 = 1.8751$ the paper quotes, to show how sensitive P is near $r_c = 1$
($dP/dr_c$ = 800, 2200, 20 000 at the three $r_c$).
"""

import csv
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from flexjax import plotting
from flexjax.analysis import cantilever_roots, critical_stiffness_coefficient, frequency_ratio, kappa_from_root
from flexjax.plotting import finish_axes

NAME = "flfj_stiffness"
DESCRIPTION = "FLFJ critical joint stiffness: P(r_c) from eq. 53 vs the paper, r(k) curves (Figs. 8-10)"

R_C = (0.95, 0.97, 0.99)
P_PAPER = (37.1361, 63.8008, 197.1245)
N_VALUES = (0.0813, 0.1626, 0.3252)  # N m, EI/l of the paper's Fig. 8
N_ARM = 0.1626  # N m, the simulated arm (flexjax.models.flfj_arm: steel rod, d = 2 mm, l = 1 m)
GAMMA1_PAPER = 1.8751


def critical_stiffness_by_bisection(r_c: float, n: float, iters: int = 200) -> float:
    """$k_c$ with $r(k_c, n) = r_c$ by bisection in $\\log k$ on the root finder (the
    paper's numerical route; independent of the closed form)."""
    ratio = jax.jit(frequency_ratio)
    lo, hi = np.log(1e-6), np.log(1e8)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if float(ratio(np.exp(mid), n)) < r_c:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return float(np.exp(0.5 * (lo + hi)))


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """P(r_c), k_c(n), r(k) curves; writes `r_vs_k.csv`, `r_vs_k.png` (Fig. 8),
    `kc_vs_n.png` (Fig. 9), `p_vs_rc.png` (Fig. 10).

    **Arguments:** `out_dir` output folder; `quick` coarser curves; `progress` unused.

    **Returns:** the summary: `p_095`, `p_097`, `p_099`, the paper's values
    `p_*_paper`, relative differences `p_*_rel_diff`, the difference expressed as an
    error in r (`p_*_equiv_r_error`), P with the rounded gamma1 = 1.8751
    (`p_*_gamma1_rounded`), the fitted slopes of the bisection route (`p_*_fit`) and
    `kc_*` for the simulated arm (n = 0.1626 N m, Table 6).
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    r_c = jnp.asarray(R_C)
    P = np.asarray(critical_stiffness_coefficient(r_c))
    dP_dr = np.asarray(jax.vmap(jax.grad(critical_stiffness_coefficient))(r_c))
    gamma1 = float(cantilever_roots(1)[0])
    P_rounded = np.asarray(kappa_from_root(GAMMA1_PAPER * jnp.sqrt(r_c)))

    # the paper's route: k_c by root finding for each n, then a least-squares line through 0
    n_arr = np.asarray(N_VALUES)
    kc_num = np.array([[critical_stiffness_by_bisection(rc, n) for n in N_VALUES] for rc in R_C])
    P_fit = kc_num @ n_arr / (n_arr @ n_arr)

    # Fig. 8: r(k) for three beams
    nk = 41 if quick else 161
    ks = np.logspace(-2, 4, nk)
    ratio_grid = jax.jit(jax.vmap(jax.vmap(frequency_ratio, in_axes=(0, None)), in_axes=(None, 0)))
    r_curves = np.asarray(ratio_grid(jnp.asarray(ks), jnp.asarray(n_arr)))
    with open(out_dir / "r_vs_k.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["k_Nm_per_rad"] + [f"r_n{n:g}" for n in N_VALUES])
        for i, k in enumerate(ks):
            wr.writerow([f"{k:.6g}"] + [f"{r_curves[j, i]:.10f}" for j in range(len(N_VALUES))])
    fig, ax = plotting.subplots(figsize=(7, 4.5))
    for j, n in enumerate(N_VALUES):
        ax.semilogx(ks, r_curves[j], label=f"n = EI/l = {n} N m")
    for rc in R_C:
        ax.axhline(rc, color="k", ls=":", lw=0.7)
    finish_axes(
        fig,
        ax,
        out_dir / "r_vs_k.png",
        xlabel="joint stiffness k [N m/rad]",
        ylabel="r = f_FLFJ / f_cant (first mode)",
        title="frequency ratio vs joint stiffness (seed Fig. 8)",
        grid_which="both",
    )

    # Fig. 9: k_c = P n
    n_line = np.linspace(0.0, 0.35, 50)
    fig, ax = plotting.subplots(figsize=(7, 4.5))
    for i, rc in enumerate(R_C):
        (line,) = ax.plot(n_line, P[i] * n_line, label=f"r_c = {rc}: k_c = {P[i]:.4f} n")
        ax.plot(n_arr, kc_num[i], "o", color=line.get_color(), mfc="none")
    finish_axes(
        fig,
        ax,
        out_dir / "kc_vs_n.png",
        xlabel="n = EI/l [N m]",
        ylabel="critical stiffness k_c [N m/rad]",
        title="k_c vs n: closed form (lines), bisection (circles) (seed Fig. 9)",
    )

    # Fig. 10: P(r_c)
    rc_line = np.linspace(0.5, 0.995, 100 if quick else 400)
    P_line = np.asarray(critical_stiffness_coefficient(jnp.asarray(rc_line)))
    fig, ax = plotting.subplots(figsize=(7, 4.5))
    ax.semilogy(rc_line, P_line, label="eq. 53, closed form")
    ax.semilogy(R_C, P_PAPER, "s", mfc="none", label="paper")
    finish_axes(
        fig,
        ax,
        out_dir / "p_vs_rc.png",
        xlabel="r_c",
        ylabel="P = k_c / n",
        title="P vs r_c (seed Fig. 10)",
        grid_which="both",
    )

    summary: dict[str, float] = {"gamma1": gamma1, "n_arm": N_ARM}
    for i, rc in enumerate(R_C):
        tag = f"{round(rc * 100):03d}"
        rel = (P[i] - P_PAPER[i]) / P_PAPER[i]
        summary[f"p_{tag}"] = float(P[i])
        summary[f"p_{tag}_paper"] = P_PAPER[i]
        summary[f"p_{tag}_rel_diff"] = float(rel)
        summary[f"p_{tag}_equiv_r_error"] = float((P[i] - P_PAPER[i]) / dP_dr[i])
        summary[f"p_{tag}_gamma1_rounded"] = float(P_rounded[i])
        summary[f"p_{tag}_fit"] = float(P_fit[i])
        summary[f"kc_{tag}"] = float(P[i] * N_ARM)
    summary["p_fit_rel_diff_max"] = float(np.max(np.abs(P_fit - P) / P))
    summary["kc_linearity_rel_err_max"] = float(
        np.max(np.abs(kc_num - P[:, None] * n_arr[None]) / (P[:, None] * n_arr[None]))
    )
    return summary
