r"""Spatial ANCF beam (split formulation, ν = 0.3) against closed forms and published
large-deflection results.

1. **Closed forms, 20 elements, static** (`solve_static` on
   `flexjax.models.ancf3d_cantilever`, loads 1e-6 of the elastic scale): an aluminium
   cantilever, L = 1 m, E = 70 GPa, ρ = 2700 kg/m³, ν = 0.3, root held by `AncfClamp3D`,
   with a 10 × 2.5 mm rectangle (1:4) and a Ø 10 mm disc:
   axial $PL/EA$, tip loads in y and z $PL^3/3EI$, a uniform load $qL^4/8EI$
   (`DistributedLoad3D`), a tip torque $TL/GJ$ (`AppliedMoment3D`, St-Venant $J$).
   The seed's continuum element (`formulation="continuum"`) for comparison.
2. **Frequencies** (20 elements, $K\phi = \omega^2 M\phi$ at the straight state): the
   first three bending frequencies per plane, $\beta_n^2\sqrt{EI/\rho A L^4}/2\pi$, and
   the first torsion frequency $\sqrt{GJ/\rho I_p}/4L$; a mesh study at 5-40 elements.
3. **45° bend** (Bathe & Bolourchi 1979): R = 100, unit square section, E = 1e7,
   ν = 0, arc in the x-y plane from the origin (tangent x, centre (0, R, 0)), fully
   clamped root, tip load along z of 300, 450, 600; polygon of straight beams
   (`AncfRigidConnection3D` at the corners; `flexjax.models.ancf3d_bend`), 8 × 2 and
   16 × 2 elements, and 16 × 2 with the torsion constant $I_p = 1/6$ instead of St-Venant's 0.1406; reference tips of
   Simo & Vu-Quoc (1986).
4. **Tip moment** $M = EI\theta/L$ rolling the cantilever into an arc of radius
   $L/\theta$ (θ = π/2; exact), 16 and 32 elements.
5. **Spinning pendulum** (large 3D rotation, dynamics; `flexjax.models.spinning_rod`): a
   1 m rod (Ø 20 mm, E = 50 MPa, ρ = 1000 kg/m³, ν = 0.3), spherical joint at one end, released horizontally with
   4 rad/s about the vertical under gravity; generalized-α with ρ∞ = 1 for 2 s; the
   energy drift $\max|E(t) - E(0)|/(mgL/2)$ at two steps.
"""

import pathlib
import time
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

import flexjax as fj
from flexjax import plotting
from flexjax.bodies.ancf3d import AncfBeam3D
from flexjax.bodies.sections import CircularSection, RectangularSection
from flexjax.models.ancf3d_bend import BEND_RADIUS, BEND_REFERENCE, UnwarpedSquare, ancf3d_bend_tips
from flexjax.models.ancf3d_cantilever import ancf3d_cantilever
from flexjax.models.spinning_rod import G, spinning_rod, spinning_rod_state
from flexjax.solvers.statics import solve_static

NAME = "ancf3d_validation"
DESCRIPTION = (
    "3D ANCF beam at nu = 0.3: closed forms, frequencies, torsion, 45° bend, tip-moment arc, spinning rod energy"
)

LENGTH, RHO, YOUNGS, NU = 1.0, 2700.0, 70e9, 0.3
SECTIONS = {"rect": RectangularSection(0.01, 0.0025), "circle": CircularSection(0.005)}
N = 20
BETAS = (1.8751040687, 4.6940911330, 7.8547574382)  # cos b cosh b = -1


def _shear(nu=NU):
    return YOUNGS / (2 * (1 + nu))


@eqx.filter_jit
def _tip(beam, force, moment, load):
    system = ancf3d_cantilever(beam, force, moment, load)
    sol = solve_static(system, beam.straight_coordinates(), 1)
    return beam.node_position(sol.q, -1), beam.node_gradients(sol.q, -1)


def static_errors(section, formulation="split"):
    """Relative errors of (axial, tip y, tip z, uniform y, torsion) at 20 elements."""
    beam = AncfBeam3D(LENGTH, RHO, YOUNGS, section, N, poisson=NU, formulation=formulation)
    A, J = float(section.area()), float(section.torsion_constant())
    Iy, Iz = (float(x) for x in section.second_moments())
    z, e, s = jnp.zeros(3), jnp.eye(3), 1e-6
    twist = lambda r, F: jnp.arctan2(F[2, 1], F[1, 1])
    cases = (
        ((s * YOUNGS * A * e[0], z, z), lambda r, F: r[0] - LENGTH, s * LENGTH),
        ((s * YOUNGS * Iz * e[1], z, z), lambda r, F: r[1], s * LENGTH**3 / 3),
        ((s * YOUNGS * Iy * e[2], z, z), lambda r, F: r[2], s * LENGTH**3 / 3),
        ((z, z, s * YOUNGS * Iz * e[1]), lambda r, F: r[1], s * LENGTH**4 / 8),
        ((z, s * _shear() * J * e[0], z), twist, s * LENGTH),
    )
    return np.array([float(resp(*_tip(beam, *loads))) / ref - 1 for loads, resp, ref in cases])


@eqx.filter_jit
def _stiffness_and_mass(beam):
    q0 = beam.straight_coordinates()
    return jax.hessian(beam.potential_energy)(q0), beam.mass_matrix(q0)


def frequency_errors(section, n=N):
    """Relative errors of the bending frequencies (y: 1-3, z: 1-3) and the first
    torsion frequency of the clamped beam with `n` elements."""
    beam = AncfBeam3D(LENGTH, RHO, YOUNGS, section, n, poisson=NU)
    K, M = (np.asarray(x) for x in _stiffness_and_mass(beam))
    free = np.r_[3:6, 12 : 12 * (n + 1)]
    w2 = scipy.linalg.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)], eigvals_only=True, subset_by_index=[0, 14])
    f = np.sqrt(w2) / (2 * np.pi)
    A, J = float(section.area()), float(section.torsion_constant())
    Iy, Iz = (float(x) for x in section.second_moments())
    refs = [b**2 * np.sqrt(YOUNGS * I / (RHO * A * LENGTH**4)) / (2 * np.pi) for I in (Iz, Iy) for b in BETAS]
    refs.append(np.sqrt(_shear() * J / (RHO * (Iy + Iz))) / (4 * LENGTH))
    return np.array([f[np.argmin(np.abs(f - r))] / r - 1 for r in refs])


def rollup_error(n, theta=np.pi / 2):
    """Largest tip-position error / L and end-section rotation error (rad, the angle
    of $r_{,y}$) of the cantilever under the tip moment $EI\\theta/L$ about z (exact:
    an arc of radius $L/\\theta$)."""
    section = SECTIONS["circle"]
    beam = AncfBeam3D(LENGTH, RHO, YOUNGS, section, n, poisson=NU)
    Iz = float(section.second_moments()[1])
    system = ancf3d_cantilever(beam, moment=jnp.array([0.0, 0.0, YOUNGS * Iz * theta / LENGTH]))
    sol = solve_static(system, beam.straight_coordinates(), 4)
    r, F = np.asarray(beam.node_position(sol.q, -1)), np.asarray(beam.node_gradients(sol.q, -1))
    radius = LENGTH / theta
    exact = np.array([radius * np.sin(theta), radius * (1 - np.cos(theta)), 0.0])
    return float(np.max(np.abs(r - exact)) / LENGTH), float(np.arctan2(-F[0, 1], F[1, 1]) - theta)


def run_spinning_rod(h, t_end=2.0, n=8, progress=False):
    """Times, tip positions and energy drift / (mgL/2) of the spinning pendulum rod."""
    beam, system = spinning_rod(n, poisson=NU)
    q0, v0 = spinning_rod_state(beam)
    traj = fj.simulate(system, q0, v0, t_end, h, solver=fj.GeneralizedAlpha(rho_inf=1.0), progress=progress)
    energy = np.asarray(traj.energy)
    scale = float(beam.total_mass()) * G * 0.5
    tips = np.asarray(traj.q[:, 12 * n : 12 * n + 3])
    return np.asarray(traj.t), tips, energy, float(np.max(np.abs(energy - energy[0])) / scale)


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Run the five checks; write `validation.npz` and `bend_and_rod.png`.

    **Arguments:** `out_dir`; `quick`: no fine 45° bend mesh, no mesh study, one step
    and 0.5 s for the spinning rod; `progress`: progress bars for the dynamic runs.

    **Returns:** `{rect,circle}_{axial,tip_y,tip_z,uniform_y,torsion}_rel_err`,
    `{rect,circle}_f{1,2,3}_{y,z}_rel_err`, `{rect,circle}_f_torsion_rel_err` (20
    elements, ν = 0.3); `continuum_rect_tip_y_rel_err`, `continuum_square_torsion_rel_err`
    (the seed's element); `bend_p{300,450,600}_tip_{x,y,z}` (m) and
    `bend_p{...}_rel_err_{x,y,z}` against Simo & Vu-Quoc, `bend_p{...}_disp_err` (the
    distance to the reference tip over the reference tip displacement), the same with
    `_fine` (16 × 2 elements) and `_jpolar` (16 × 2, torsion constant $I_p = 1/6$
    instead of St-Venant's 0.1406; neither in quick); `rollup_tip_err_n{16,32}` (/L),
    `rollup_rotation_err_n{16,32}` (rad); `rod_energy_drift_h{1,0p5}ms`, `rod_tip_min_z` (m).
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, float] = {}
    arrays = {}
    for name, section in SECTIONS.items():
        for key, err in zip(("axial", "tip_y", "tip_z", "uniform_y", "torsion"), static_errors(section), strict=False):
            summary[f"{name}_{key}_rel_err"] = float(err)
        keys = [f"f{k}_{p}" for p in "yz" for k in (1, 2, 3)] + ["f_torsion"]
        for key, err in zip(keys, frequency_errors(section), strict=False):
            summary[f"{name}_{key}_rel_err"] = float(err)
    with warnings.catch_warnings():  # the locking warning: measured here on purpose
        warnings.simplefilter("ignore")
        summary["continuum_rect_tip_y_rel_err"] = float(static_errors(SECTIONS["rect"], "continuum")[1])
        summary["continuum_square_torsion_rel_err"] = float(
            static_errors(RectangularSection(0.01, 0.01), "continuum")[4]
        )
    if not quick:
        meshes = (5, 10, 20, 40)
        arrays["mesh_study_n"] = np.array(meshes)
        arrays["mesh_study_rect_freq_err"] = np.array([frequency_errors(SECTIONS["rect"], n) for n in meshes])

    bends = {"": (8, 2, None)} | ({} if quick else {"_fine": (16, 2, None), "_jpolar": (16, 2, UnwarpedSquare(1.0))})
    for suffix, (segments, elements, section) in bends.items():
        start = time.perf_counter()
        tips = ancf3d_bend_tips(segments, elements, section)
        summary[f"bend_wall_s{suffix}"] = time.perf_counter() - start
        tip0 = np.array([BEND_RADIUS * np.sin(np.pi / 4), BEND_RADIUS * (1 - np.cos(np.pi / 4)), 0.0])
        for P, ref in BEND_REFERENCE.items():
            ref = np.array(ref)
            for k, c in enumerate("xyz"):
                summary[f"bend_p{P}_tip_{c}{suffix}"] = float(tips[P][k])
                summary[f"bend_p{P}_rel_err_{c}{suffix}"] = float(tips[P][k] / ref[k] - 1)
            summary[f"bend_p{P}_disp_err{suffix}"] = float(np.linalg.norm(tips[P] - ref) / np.linalg.norm(ref - tip0))
            arrays[f"bend_tip_p{P}{suffix}"] = tips[P]

    for n in (16, 32):
        summary[f"rollup_tip_err_n{n}"], summary[f"rollup_rotation_err_n{n}"] = rollup_error(n)

    steps = {"1ms": 1e-3} | ({} if quick else {"0p5ms": 5e-4})
    for label, h in steps.items():
        t, tips, energy, drift = run_spinning_rod(h, 0.5 if quick else 2.0, progress=progress)
        summary[f"rod_energy_drift_h{label}"] = drift
        arrays[f"rod_t_{label}"], arrays[f"rod_tip_{label}"], arrays[f"rod_energy_{label}"] = t, tips, energy
    summary["rod_tip_min_z"] = float(np.min(arrays["rod_tip_1ms"][:, 2]))
    np.savez_compressed(out_dir / "validation.npz", **arrays)
    fig, axes = plotting.subplots(1, 2, figsize=(11, 4.5))
    ax = axes[0]
    for P in BEND_REFERENCE:
        ax.plot(P, summary[f"bend_p{P}_disp_err"], "o", color="C0")
        if not quick:
            ax.plot(P, summary[f"bend_p{P}_disp_err_fine"], "s", color="C1")
    ax.set_xlabel("tip load P")
    ax.set_ylabel("|tip - Simo & Vu-Quoc| / |tip displacement|")
    ax.set_title("45° bend (o: 8 × 2, s: 16 × 2 elements)")
    ax.grid(True, alpha=0.3)
    ax = axes[1]
    for label in steps:
        e = arrays[f"rod_energy_{label}"]
        ax.plot(arrays[f"rod_t_{label}"], e - e[0], label=f"h = {label}")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("E(t) - E(0) [J]")
    ax.set_title("spinning rod, generalized-α ρ∞ = 1")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "bend_and_rod.png", dpi=120)
    plotting.close(fig)
    return summary
