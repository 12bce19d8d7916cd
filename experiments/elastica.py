r"""Large-deflection cantilever (the elastica) with planar ANCF beams, stretch measure.

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

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import flexjax as fj
from flexjax.bodies.ancf2d import AncfBeam2D
from flexjax.joints.ancf import AncfClamp
from flexjax.plotting import _pyplot, finish_axes
from flexjax.solvers.statics import solve_static

NAME = "elastica"
DESCRIPTION = "ANCF cantilever (stretch measure) under a tip load, P L^2/EI = 1, 2, 5, vs the exact elastica"

LENGTH, RHO, YOUNGS = 1.0, 7800.0, 2.1e11  # m, kg/m^3, Pa
SIDE = 0.01  # m, square cross-section
AREA, SECOND_MOMENT = SIDE**2, SIDE**4 / 12
ALPHAS = (1, 2, 5)
ELEMENTS = 16
MESHES, MESHES_QUICK = (2, 4, 8, 16, 32), (8, 16)
LOAD_STEPS = 10


class _Constant(eqx.Module):
    """Constant tip force; a leaf, so each load reuses the compiled solver."""

    value: jax.Array

    def __call__(self, t):
        return self.value


def elastica_reference(alpha: float, ea_ratio: float = np.inf, nsteps: int = 1000):
    r"""Exact (extensible) elastica of the cantilever, in units L = EI = 1.

    Shooting on $\theta'(0)$ by repeated 32-way bracketing of $\theta'(1) = 0$, with
    classic RK4 on `nsteps` steps (vectorised over the candidates).

    **Arguments:** `alpha` $= PL^2/EI$; `ea_ratio` $= EA L^2/EI$ (`inf`: inextensible).

    **Returns:** `(deflection, shortening, s, x, y)`: tip deflection / L, axial
    shortening / L and the deformed centre line at `nsteps + 1` arc-length points.
    """

    def rhs(y):
        th, k = y[0], y[1]
        stretch = 1.0 - alpha * np.sin(th) / ea_ratio
        return np.stack([k, alpha * stretch * np.cos(th), stretch * np.cos(th), stretch * np.sin(th)])

    def integrate(k0, path=False):
        y = np.stack([np.zeros_like(k0), k0, np.zeros_like(k0), np.zeros_like(k0)])
        h, out = 1.0 / nsteps, [y]
        for _ in range(nsteps):
            k1 = rhs(y)
            k2 = rhs(y + 0.5 * h * k1)
            k3 = rhs(y + 0.5 * h * k2)
            k4 = rhs(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if path:
                out.append(y)
        return np.stack(out) if path else y

    lo, hi = -1.0001 * alpha, 0.0  # theta'(0) = -P x_tip / EI lies in (-alpha, 0)
    for _ in range(9):  # bracket width alpha / 32**9 ~ 3e-14 alpha
        ks = np.linspace(lo, hi, 33)
        end = integrate(ks)[1]
        i = int(np.nonzero(np.sign(end[:-1]) != np.sign(end[1:]))[0][0])
        lo, hi = ks[i], ks[i + 1]
    path = integrate(np.array([0.5 * (lo + hi)]), path=True)[:, :, 0]
    x, y = path[:, 2], path[:, 3]
    return -y[-1], 1.0 - x[-1], np.linspace(0.0, 1.0, nsteps + 1), x, y


def _tips(n: int, strain: str = "stretch"):
    """Tip positions (m) and deformed shapes for every load, `n` elements."""
    beam = AncfBeam2D(LENGTH, RHO, AREA, SECOND_MOMENT, YOUNGS, n, strain=strain)
    q0 = beam.straight_coordinates()
    ei = YOUNGS * SECOND_MOMENT
    s = jnp.linspace(0.0, LENGTH, 101)
    tips, shapes = [], []
    for alpha in ALPHAS:
        load = _Constant(jnp.array([0.0, -alpha * ei / LENGTH**2]))
        system = fj.System([beam], [AncfClamp(0, 0)], [fj.PointForce(0, jnp.array([LENGTH]), load)])
        q = solve_static(system, q0, LOAD_STEPS).q
        tips.append(np.asarray(beam.node_position(q, -1)))
        shapes.append(np.asarray(jax.vmap(lambda si, q=q: beam.position(q, si[None]))(s)))
    return tips, shapes


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
    results = {n: _tips(n) for n in meshes}
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
        tip_gl = _tips(ELEMENTS, "green_lagrange")[0][ALPHAS.index(5)]
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
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
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
    fig, ax = plt.subplots(figsize=(6, 4))
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
