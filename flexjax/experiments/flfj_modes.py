r"""Natural frequencies of the FLFJ beam (seed 000, section 3.1 and 3.3, Tables 2, 4, 5).

The flexible joint is the elastic root constraint of a pinned beam (seed eq. 27-32).
Frequencies from the roots of eq. 32 (`flexjax.analysis.flfj`) are compared with an
independent Hermite-cubic finite-element model of the same beam with the same root
spring (`flexjax.analysis.beam_fe`; the paper used ANSYS), for the paper's joint
stiffness k = 1 N m/rad, and swept over k from 0 (pinned-free, with its rigid mode)
to the cantilever limit (Tables 4-5).

**Beam (the paper's Table 1 is missing)**, `flexjax.models.flfj_arm`: a slender circular steel
rod: diameter 2 mm, E = 207 GPa, rho = 7850 kg/m³, l = 1 m, so EI = 0.16258 N m², rho A = 0.024662 kg/m,
EA = 6.50e5 N and n = EI/l = 0.1626 N m, the middle of the paper's three n values
(0.0813, 0.1626, 0.3252 are this rod at l = 2, 1, 0.5 m). Steel with d = 2 mm reproduces
n = 0.1626 to four digits, which suggests it is the paper's rod.
"""

import csv
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from flexjax import plotting
from flexjax.analysis import beam_fe_frequencies, flfj_frequencies, flfj_roots, transverse_modes
from flexjax.models.flfj_arm import DENSITY, DIAMETER, EI, LENGTH, RHO_A, YOUNG, flfj_fe_mode_shapes
from flexjax.plotting import finish_axes

NAME = "flfj_modes"
DESCRIPTION = "FLFJ beam: frequencies from the frequency equation vs finite elements, sweep of the joint stiffness"

K_JOINT = 1.0  # N m/rad, the paper's joint
NMODES = 4
N_ELEMENTS = 40
K_SWEEP = (0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1e3, 1e4, np.inf)
K_SWEEP_QUICK = (0.0, 0.1, 1.0, 10.0, 100.0, np.inf)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Frequencies at k = 1 N m/rad (modal vs FE), a k sweep, mode shapes; writes
    `frequencies_vs_k.csv`, `frequencies_vs_k.png`, `mode_shapes.png`.

    **Arguments:** `out_dir` output folder; `quick` a shorter sweep; `progress` unused (no
    time integration here).

    **Returns:** the summary: `ei`, `rho_a`, `length`, `k`, `f1`..`f4` (Hz, modal),
    `f1_fe`..`f4_fe`, `freq_rel_diff_max`, the cantilever limit `f1_cant`..`f4_cant`,
    `gamma1`..`gamma4`, `mode_shape_diff_max` (modal vs FE shapes at the nodes) and the
    sweep's `sweep_freq_rel_diff_max`.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    f = np.asarray(flfj_frequencies(EI, RHO_A, LENGTH, K_JOINT, NMODES))
    f_fe = beam_fe_frequencies(EI, RHO_A, LENGTH, K_JOINT, NMODES, N_ELEMENTS)
    gamma = np.asarray(flfj_roots(K_JOINT * LENGTH / EI, NMODES))
    f_cant = np.asarray(flfj_frequencies(EI, RHO_A, LENGTH, jnp.inf, NMODES))

    # sweep (Tables 4-5): modal by vmap over k, FE per k
    ks = np.asarray(K_SWEEP_QUICK if quick else K_SWEEP)
    f_sweep = np.asarray(jax.vmap(lambda k: flfj_frequencies(EI, RHO_A, LENGTH, k, NMODES))(jnp.asarray(ks)))
    fe_sweep = np.stack(
        [
            beam_fe_frequencies(
                EI,
                RHO_A,
                LENGTH,
                0.0 if np.isinf(k) else k,
                NMODES,
                N_ELEMENTS,
                root="clamped" if np.isinf(k) else "elastic",
            )
            for k in ks
        ]
    )
    nonrigid = f_sweep > 0  # k = 0: the rigid mode (0 Hz) in both models
    sweep_diff = float(np.max(np.abs(f_sweep - fe_sweep)[nonrigid] / fe_sweep[nonrigid]))
    with open(out_dir / "frequencies_vs_k.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(
            ["k_Nm_per_rad"]
            + [f"f{i}_modal_Hz" for i in range(1, NMODES + 1)]
            + [f"f{i}_fe_Hz" for i in range(1, NMODES + 1)]
        )
        for k, a, b in zip(ks, f_sweep, fe_sweep, strict=False):
            wr.writerow([("inf" if np.isinf(k) else f"{k:g}")] + [f"{x:.8g}" for x in a] + [f"{x:.8g}" for x in b])

    # mode shapes at k = 1 (Fig. 6): modal vs FE nodal values
    s_nodes, fe_shapes = flfj_fe_mode_shapes(K_JOINT, NMODES, N_ELEMENTS)
    modal_nodes = np.asarray(transverse_modes(gamma, s_nodes))
    shape_diff = float(np.max(np.abs(modal_nodes - fe_shapes)))

    fig, ax = plotting.subplots(figsize=(7, 4.5))
    finite = np.isfinite(ks) & (ks > 0)
    for i in range(NMODES):
        (line,) = ax.semilogx(ks[finite], f_sweep[finite, i], "-", label=f"mode {i + 1} (eq. 32)")
        ax.semilogx(ks[finite], fe_sweep[finite, i], "o", color=line.get_color(), mfc="none")
        ax.axhline(f_cant[i], color=line.get_color(), ls=":", lw=0.8)
    finish_axes(
        fig,
        ax,
        out_dir / "frequencies_vs_k.png",
        xlabel="joint stiffness k [N m/rad]",
        ylabel="natural frequency [Hz]",
        title="FLFJ beam: eq. 32 (lines) vs FE (circles); dotted: cantilever",
        grid_which="both",
        legend_size=8,
    )

    s_fine = np.linspace(0.0, 1.0, 201)
    shapes = np.asarray(transverse_modes(gamma, s_fine))
    fig, ax = plotting.subplots(figsize=(7, 4.5))
    for i in range(NMODES):
        (line,) = ax.plot(s_fine * LENGTH, shapes[:, i], label=f"mode {i + 1}, {f[i]:.3f} Hz")
        ax.plot(s_nodes * LENGTH, fe_shapes[:, i], "o", ms=3, color=line.get_color(), mfc="none")
    finish_axes(
        fig,
        ax,
        out_dir / "mode_shapes.png",
        xlabel="x [m]",
        ylabel="phi (normalized: mean square 1)",
        title=f"mode shapes, k = {K_JOINT} N m/rad: eq. 35 (lines) vs FE nodes (circles)",
        legend_size=8,
    )

    summary = {
        "ei": EI,
        "rho_a": RHO_A,
        "length": LENGTH,
        "k": K_JOINT,
        "diameter": DIAMETER,
        "young_modulus": YOUNG,
        "density": DENSITY,
        "n_param": EI / LENGTH,
    }
    for i in range(NMODES):
        summary[f"f{i + 1}"] = float(f[i])
    for i in range(NMODES):
        summary[f"f{i + 1}_fe"] = float(f_fe[i])
    summary["freq_rel_diff_max"] = float(np.max(np.abs(f - f_fe) / f_fe))
    for i in range(NMODES):
        summary[f"f{i + 1}_cant"] = float(f_cant[i])
        summary[f"gamma{i + 1}"] = float(gamma[i])
    summary.update(
        {
            "mode_shape_diff_max": shape_diff,
            "sweep_freq_rel_diff_max": sweep_diff,
            "sweep_points": int(ks.size),
            "fe_elements": N_ELEMENTS,
        }
    )
    return summary
