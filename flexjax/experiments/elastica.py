r"""Large-deflection cantilever (the elastica) with planar ANCF beams, stretch measure
(`flexjax.models.elastica`).

A straight beam clamped at the origin along +x carries a non-following (vertical) tip
load $P$ with $\alpha = P L^2/EI = 1, 2, 5$. The static equilibrium (Newton with load
steps) of an `AncfBeam2D` with 16 elements is compared with the exact extensible
elastica of the same continuum model, $EI\theta'' = P(1+\varepsilon)\cos\theta$,
$\varepsilon = -P\sin\theta/EA$, $\theta(0) = 0$, $\theta'(L) = 0$, solved here by
shooting with RK4 (error < 1e-10), and with the classic inextensible values
(Bisshopp & Drucker 1945). Strain measure: `"stretch"` (the default); the 16-element
Green-Lagrange result at $\alpha = 5$ is reported too. The beam is a 1 m steel strip of
1 cm square section ($EA L^2/EI = 1.2\cdot10^5$).
"""

import pathlib

import numpy as np

from flexjax import plotting
from flexjax.models.elastica import (
    AREA,
    LENGTH,
    LOAD_STEPS,
    SECOND_MOMENT,
    YOUNGS,
    elastica_reference,
    solve_elastica,
)
from flexjax.plotting import finish_axes

NAME = "elastica"
DESCRIPTION = "ANCF cantilever (stretch measure) under a tip load, P L^2/EI = 1, 2, 5, vs the exact elastica"

ALPHAS = (1, 2, 5)
ELEMENTS = 16
MESHES, MESHES_QUICK = (2, 4, 8, 16, 32), (8, 16)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Solve the cantilever for every load and mesh; write `elastica.png`,
    `convergence.png` and `elastica.npz` to `out_dir`.

    **Arguments:** `out_dir` (created if missing); `quick`: meshes 8, 16 instead of
    2 ... 32 and no Green-Lagrange run; `progress`: unused (static solves are short).

    **Returns:** `tip_deflection_ratio_{1,2,5}`, `axial_shortening_ratio_{1,2,5}` (16
    elements), the exact values `*_exact_*`, relative errors `*_rel_error_*`, the
    inextensible values `*_inextensible_*`, the deflection error at
    $\alpha = 5$ per mesh `tip_deflection_rel_error_5_n{n}`, and the parameters.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ea_ratio = YOUNGS * AREA * LENGTH**2 / (YOUNGS * SECOND_MOMENT)
    refs = {a: elastica_reference(a, ea_ratio) for a in ALPHAS}
    inext = {a: elastica_reference(a)[:2] for a in ALPHAS}
    meshes = MESHES_QUICK if quick else MESHES
    results = {n: solve_elastica(n, ALPHAS) for n in meshes}
    summary: dict[str, float] = {}
    tips16, shapes16 = results[ELEMENTS]
    for a, tip in zip(ALPHAS, tips16, strict=False):
        dy, dx = -tip[1] / LENGTH, 1.0 - tip[0] / LENGTH
        summary[f"tip_deflection_ratio_{a}"] = dy
        summary[f"axial_shortening_ratio_{a}"] = dx
        summary[f"tip_deflection_exact_{a}"] = refs[a][0]
        summary[f"axial_shortening_exact_{a}"] = refs[a][1]
        summary[f"tip_deflection_rel_error_{a}"] = dy / refs[a][0] - 1
        summary[f"axial_shortening_rel_error_{a}"] = dx / refs[a][1] - 1
        summary[f"tip_deflection_inextensible_{a}"] = inext[a][0]
        summary[f"axial_shortening_inextensible_{a}"] = inext[a][1]
    errors = {n: [-t[1] / LENGTH / refs[a][0] - 1 for a, t in zip(ALPHAS, results[n][0], strict=False)] for n in meshes}
    for n in meshes:
        summary[f"tip_deflection_rel_error_5_n{n}"] = errors[n][ALPHAS.index(5)]
    if not quick:
        tip_gl = solve_elastica(ELEMENTS, ALPHAS, "green_lagrange")[0][ALPHAS.index(5)]
        summary["tip_deflection_ratio_5_green_lagrange"] = -tip_gl[1] / LENGTH
    summary.update(
        elements=ELEMENTS,
        load_steps=LOAD_STEPS,
        length=LENGTH,
        youngs=YOUNGS,
        area=AREA,
        second_moment=SECOND_MOMENT,
        ea_l2_over_ei=ea_ratio,
    )

    np.savez_compressed(
        out_dir / "elastica.npz",
        alphas=np.array(ALPHAS),
        shapes_16=np.array(shapes16),
        exact_x=np.array([refs[a][3] for a in ALPHAS]),
        exact_y=np.array([refs[a][4] for a in ALPHAS]),
        meshes=np.array(meshes),
        deflection_errors=np.array([errors[n] for n in meshes]),
    )
    fig, ax = plotting.subplots(figsize=(6, 5))
    for k, a in enumerate(ALPHAS):
        ax.plot(refs[a][3] * LENGTH, refs[a][4] * LENGTH, "k-", lw=1, label="exact elastica" if k == 0 else None)
        ax.plot(shapes16[k][:, 0], shapes16[k][:, 1], "--", label=f"ANCF, 16 el., PL²/EI = {a}")
        ax.plot(*tips16[k], "o", ms=4)
    ax.set_aspect("equal")
    finish_axes(
        fig,
        ax,
        out_dir / "elastica.png",
        xlabel="x [m]",
        ylabel="y [m]",
        title="cantilever under a tip load: ANCF (stretch) vs elastica",
        legend_size=8,
    )
    fig, ax = plotting.subplots(figsize=(6, 4))
    for k, a in enumerate(ALPHAS):
        ax.loglog(meshes, [abs(errors[n][k]) for n in meshes], "o-", label=f"PL²/EI = {a}")
    ax.set_xticks(list(meshes), labels=[str(n) for n in meshes])
    ax.tick_params(axis="x", which="minor", labelbottom=False)
    finish_axes(
        fig,
        ax,
        out_dir / "convergence.png",
        xlabel="elements",
        ylabel="|relative error| of the tip deflection",
        grid_which="both",
    )
    return summary
