r"""Spatial ANCF cantilever (fully parameterized elements) against beam theory.

A 1 m steel bar (12 mm along y, 10 mm along z, E = 210 GPa, ρ = 7800 kg/m³) is clamped
at the root (`AncfClamp3D`: position and section held, axial gradient free). From the
stiffness at the straight state (the Hessian of the strain energy) and the constant
mass matrix: the tip deflections under tip loads in y and z against $PL^3/3EI$, the
axial tip displacement against $PL/EA$ and the first bending frequency (generalized
eigenproblem $K\phi = \omega^2 M\phi$) against $1.8751^2\sqrt{EI/(\rho A L^4)}/2\pi$.
Meshes 2 ... 32 elements, the seed's continuum element (`formulation="continuum"`) at
Poisson ratio 0 and 0.3 (Poisson locking), and the default split formulation at 0.3 (no
locking; `docs/ancf3d.md`).
"""

import pathlib
import warnings

import equinox as eqx
import jax
import numpy as np

import flexjax  # noqa: F401  (float64)
from flexjax import plotting
from flexjax.bodies.ancf3d import AncfBeam3D
from flexjax.bodies.sections import RectangularSection
from flexjax.plotting import finish_axes

NAME = "ancf3d_cantilever"
DESCRIPTION = "3D ANCF cantilever: tip deflections y/z, axial stretch and f1 vs beam theory, 2-32 elements"

LENGTH, RHO, YOUNGS = 1.0, 7800.0, 2.1e11  # m, kg/m^3, Pa
WIDTH, HEIGHT = 0.012, 0.010  # m, along y and z
MESHES, MESHES_QUICK = (2, 4, 8, 16, 32), (8, 16)
POISSONS = (0.0, 0.3)
BETA1 = 1.8751040687  # first root of cos(b) cosh(b) = -1
QUANTITIES = ("tip_deflection_y", "tip_deflection_z", "axial", "f1")


@eqx.filter_jit
def _stiffness_and_mass(beam):
    q0 = beam.straight_coordinates()
    return jax.hessian(beam.potential_energy)(q0), beam.mass_matrix(q0)


def relative_errors(n: int, poisson: float = 0.0, formulation: str = "continuum") -> np.ndarray:
    """Relative errors of (tip deflection y, tip deflection z, axial tip displacement,
    first bending frequency) of the clamped beam with `n` elements."""
    section = RectangularSection(WIDTH, HEIGHT)
    with warnings.catch_warnings():  # the locking warning: measured here on purpose
        warnings.simplefilter("ignore")
        beam = AncfBeam3D(LENGTH, RHO, YOUNGS, section, n, poisson=poisson, formulation=formulation)
    K, M = (np.asarray(x) for x in _stiffness_and_mass(beam))
    free = np.r_[3:6, 12 : 12 * (n + 1)]  # clamp: r_0, r_0y, r_0z fixed
    Kf, Mf = K[np.ix_(free, free)], M[np.ix_(free, free)]
    area = WIDTH * HEIGHT
    i_z, i_y = HEIGHT * WIDTH**3 / 12, WIDTH * HEIGHT**3 / 12
    refs = (LENGTH**3 / (3 * YOUNGS * i_z), LENGTH**3 / (3 * YOUNGS * i_y), LENGTH / (YOUNGS * area))
    errors = []
    for d, ref in zip((1, 2, 0), refs, strict=False):
        f = np.zeros(K.shape[0])
        f[12 * n + d] = 1.0
        u = np.zeros(K.shape[0])
        u[free] = np.linalg.solve(Kf, f[free])
        errors.append(u[12 * n + d] / ref - 1)
    # generalized eigenproblem by Cholesky reduction of the mass matrix
    Lc = np.linalg.cholesky(Mf)
    Li = np.linalg.inv(Lc)
    w2 = np.linalg.eigvalsh(Li @ Kf @ Li.T)[0]
    f1 = BETA1**2 * np.sqrt(YOUNGS * min(i_y, i_z) / (RHO * area * LENGTH**4)) / (2 * np.pi)
    errors.append(np.sqrt(w2) / (2 * np.pi) / f1 - 1)
    return np.array(errors)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Compute the errors for every mesh and Poisson ratio; write `convergence.png` and
    `ancf3d_cantilever.npz` to `out_dir`.

    **Arguments:** `out_dir` (created if missing); `quick`: meshes 8, 16 only and no
    Poisson-ratio study; `progress`: unused (each mesh takes seconds).

    **Returns:** `tip_deflection_y_rel_err`, `tip_deflection_z_rel_err`, `axial_rel_err`,
    `f1_rel_err` at 8 elements and ν = 0 (continuum), the same with the suffix `_16` at
    16, and with the prefix `split_nu03_` the split formulation at ν = 0.3 (8 and 16).
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    meshes = MESHES_QUICK if quick else MESHES
    poissons = POISSONS[:1] if quick else POISSONS
    errors = np.array([[relative_errors(n, nu) for n in meshes] for nu in poissons])  # (nu, mesh, quantity)
    summary: dict[str, float] = {}
    for suffix, n in (("", 8), ("_16", 16)):
        for k, name in enumerate(QUANTITIES):
            summary[f"{name}_rel_err{suffix}"] = float(errors[0, meshes.index(n), k])
        for k, value in enumerate(relative_errors(n, 0.3, "split")):
            summary[f"split_nu03_{QUANTITIES[k]}_rel_err{suffix}"] = float(value)

    np.savez_compressed(
        out_dir / "ancf3d_cantilever.npz",
        meshes=np.array(meshes),
        poissons=np.array(poissons),
        errors=errors,
        quantities=np.array(QUANTITIES),
    )
    fig, ax = plotting.subplots(figsize=(6, 4.5))
    labels = ("tip deflection y", "tip deflection z", "axial", "first frequency")
    for j, nu in enumerate(poissons):
        for k, label in enumerate(labels):
            err = np.abs(errors[j, :, k])
            if nu == 0.0 and k == 2:
                continue  # exact to round-off at nu = 0
            style = "o-" if nu == 0.0 else "s--"
            ax.loglog(meshes, err, style, label=f"{label}, ν = {nu}")
    ax.set_xticks(list(meshes), labels=[str(n) for n in meshes])
    ax.tick_params(axis="x", which="minor", labelbottom=False)
    finish_axes(
        fig,
        ax,
        out_dir / "convergence.png",
        xlabel="elements",
        ylabel="|relative error|",
        title="3D ANCF cantilever vs beam theory (axial exact at ν = 0)",
        grid_which="both",
        legend_size=7,
    )
    return summary
