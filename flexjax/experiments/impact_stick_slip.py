r"""Frictional impact with stick-slip of a flexible beam on an inclined surface (seed 004 §3).

The seed §3 beam (`flexjax.models.impact_beam`: ρ = 2766.7 kg/m³, E = 68.952 GPa,
L = 1 m, I = 7.85e-9 m⁴, A = 3.14e-4 m²) on a free pivot, released at rest from
θ = 0.125π under gravity; its tip meets the line 2x + 3y = 0 through the pivot, μ = 0.3,
restitution 0 (impulse-momentum impact), Baumgarte α = β = 20 in the contact phases.
Variable topology (`flexjax.contact.simulate_contact`): separation / impact / stick /
slip, switching instants located by diffrax events (Tsit5, rtol 1e-8), 2.0 s.
A planar-ANCF version of the same beam (pinned node 0) runs through the first impact as
a cross-check of the modal model.

Plots (the seed's Figs. 3-8): `tip_displacement.png` (Fig. 3), `energy.png` (Fig. 4),
`normal_force.png` (Fig. 5, with zoom), `tangential_force.png` (Fig. 6, with zoom),
`slip_displacement.png` (Fig. 7), `slip_velocity.png` (Fig. 8); data `impact_stick_slip.npz`
and the switch log `switches.csv`.

**Summary:** `first_contact_time`, `first_normal_peak_time` (first local maximum of
$\lambda_N$ after the first impact), `second_normal_peak_time` (largest $\lambda_N$ of the
second macro-collision: contacts closer than `MACRO_GAP` s apart form one macro-collision),
`n_impacts`, `n_stick_slip_switches` (stick↔slip and slip reversals), `energy_initial`,
`energy_final` (J), `energy_increase_max` (largest rise of the total mechanical energy
from one switching instant to the next, J), `constraint_residual_max` (m),
`lambda_n_min` (N, contact phases), `friction_cone_violation_max` (N, stick:
$\max(|\lambda_T| - \mu\lambda_N, 0)$), plus `wall_time`, `n_steps`, `n_rejected_steps`,
`n_events`, `n_segments`, `paper_fixed_steps` (the seed's 1e-6 s stepping over the run),
`ancf_first_contact_time`, `ancf_first_impulse`, `first_impulse`, `n_modes`, `t_end`.
"""

import pathlib
import time

import equinox as eqx
import numpy as np

from flexjax import plotting
from flexjax.contact import IMPACT, PHASE_NAMES, SEPARATION, STICK, first_contact, impact, simulate_contact
from flexjax.models.impact_beam import (
    MU,
    impact_beam,
    impact_beam_ancf,
    impact_beam_ancf_state,
    impact_beam_state,
)
from flexjax.plotting import finish_axes

NAME = "impact_stick_slip"
DESCRIPTION = "flexible beam hitting an inclined surface with friction: impact, stick-slip, energy (seed 004)"

T_END, T_END_QUICK = 2.0, 0.45  # s
N_MODES = 3
ANCF_ELEMENTS = 4
PAPER_FIRST_PEAK = 0.373791  # s, seed §3
PAPER_STEP = 1e-6  # s, the seed's step in contact
MACRO_GAP = 0.02  # s: contacts separated by less belong to one macro-collision


def _contact_episodes(sol):
    """(start, end) index ranges of the macro-collisions."""
    closed = sol.phase != SEPARATION
    idx = np.flatnonzero(closed)
    if idx.size == 0:
        return []
    episodes, start = [], idx[0]
    for a, b in zip(idx[:-1], idx[1:], strict=False):
        if sol.t[b] - sol.t[a] > MACRO_GAP:
            episodes.append((start, a))
            start = b
    episodes.append((start, idx[-1]))
    return episodes


def _first_local_max(t, y):
    for k in range(1, len(y) - 1):
        if y[k] >= y[k - 1] and y[k] > y[k + 1] and y[k] > 0:
            return float(t[k])
    return float(t[int(np.argmax(y))])


def _summary(sol, mu):
    contact_rows = sol.phase != SEPARATION
    impacts = sol.impacts
    t_imp = impacts[0].time if impacts else np.inf
    after = (sol.t >= t_imp) & contact_rows
    episodes = _contact_episodes(sol)
    peak1 = _first_local_max(sol.t[after], sol.lam_n[after]) if after.any() else 0.0
    if len(episodes) > 1:
        a, b = episodes[1]
        peak2 = float(sol.t[a + int(np.argmax(sol.lam_n[a : b + 1]))])
    else:
        peak2 = 0.0
    # energy at every switching instant (pre- and post-jump values), in time order
    e_sw = [sol.energy[0]]
    for s in sol.switches[1:]:
        e_sw += [s.energy_before, s.energy_after]
    e_sw.append(sol.energy[-1])
    rises = np.diff(np.asarray(e_sw))
    stick = sol.phase == STICK
    cone = np.abs(sol.lam_t[stick]) - mu * sol.lam_n[stick]
    ss = [s for s in sol.switches if s.before not in (SEPARATION, IMPACT) and s.after not in (SEPARATION, IMPACT)]
    return {
        "first_contact_time": float(t_imp),
        "first_normal_peak_time": peak1,
        "second_normal_peak_time": peak2,
        "n_impacts": len(impacts),
        "n_stick_slip_switches": len(ss),
        "n_macro_collisions": len(episodes),
        "energy_initial": float(sol.energy[0]),
        "energy_final": float(sol.energy[-1]),
        "energy_increase_max": float(max(np.max(rises, initial=0.0), 0.0)),
        "constraint_residual_max": float(np.max(sol.residual)),
        "lambda_n_min": float(np.min(sol.lam_n[contact_rows], initial=0.0)),
        "friction_cone_violation_max": float(max(np.max(cone, initial=0.0), 0.0)),
        "first_impulse": float(impacts[0].p_n) if impacts else 0.0,
        "n_steps": sol.n_steps,
        "n_rejected_steps": sol.n_rejected,
        "n_events": sol.n_events,
        "n_segments": sol.n_segments,
    }


def _ancf_check(quick):
    """First contact and first impulse of the planar-ANCF beam (cross-check)."""
    system, contact = impact_beam_ancf(ANCF_ELEMENTS)
    q0, v0 = impact_beam_ancf_state(ANCF_ELEMENTS)
    q0, v0 = system.consistent_state(q0, v0)
    # the ANCF beam's axial modes limit the explicit step to a few microseconds
    tc, qc, vc = first_contact(system, contact, q0, v0, 0.5, rtol=1e-8, atol=1e-10, max_steps=400_000)
    out = eqx.filter_jit(impact)(system, contact, qc, vc, tc)
    return float(tc), float(out.p_n)


def _plots(sol, system, contact, out_dir, mu):
    body = system.bodies[0]
    import jax

    tip = np.asarray(jax.jit(jax.vmap(lambda q: body.position(q, contact.point)))(sol.q))
    t = sol.t
    fig, axes = plotting.subplots(2, 1, figsize=(7, 6), sharex=True)
    for ax, k, lab in ((axes[0], 0, "X"), (axes[1], 1, "Y")):
        ax.plot(t, tip[:, k])
        ax.set_ylabel(f"tip {lab} [m]")
        ax.grid(True, alpha=0.3)
    axes[1].set_xlabel("t [s]")
    axes[0].set_title("tip displacement in the base frame (seed Fig. 3)")
    fig.tight_layout()
    fig.savefig(out_dir / "tip_displacement.png", dpi=120)
    plotting.close(fig)

    import jax.numpy as jnp

    kin = np.asarray(jax.jit(jax.vmap(system.kinetic_energy))(jnp.asarray(sol.q), jnp.asarray(sol.v)))
    ela = np.asarray(jax.jit(jax.vmap(body.potential_energy))(jnp.asarray(sol.q)))
    fig, ax = plotting.subplots(figsize=(7, 4))
    for y, lab in ((kin, "kinetic"), (ela, "elastic"), (sol.energy - kin - ela, "gravity"), (sol.energy, "total")):
        ax.plot(t, y, label=lab)
    finish_axes(
        fig, ax, out_dir / "energy.png", xlabel="t [s]", ylabel="energy [J]", title="mechanical energy (seed Fig. 4)"
    )

    def force_plot(y, name, ylabel, title):
        fig, axes = plotting.subplots(1, 2, figsize=(11, 4))
        axes[0].plot(t, y, lw=0.7)
        rows = np.flatnonzero(sol.phase != SEPARATION)
        if rows.size:
            k = rows[int(np.argmax(np.abs(y[rows])))]
            w = (t > t[k] - 5e-3) & (t < t[k] + 5e-3)
            axes[1].plot(t[w], y[w], ".-", ms=2, lw=0.7)
            axes[1].set_title(f"zoom around t = {t[k]:.4f} s")
        for ax in axes:
            ax.set_xlabel("t [s]")
            ax.set_ylabel(ylabel)
            ax.grid(True, alpha=0.3)
        axes[0].set_title(title)
        fig.tight_layout()
        fig.savefig(out_dir / name, dpi=120)
        plotting.close(fig)

    force_plot(sol.lam_n, "normal_force.png", "normal force [N]", "normal contact force (seed Fig. 5)")
    force_plot(sol.lam_t, "tangential_force.png", "tangential force [N]", "tangential contact force (seed Fig. 6)")
    closed = sol.phase != SEPARATION
    anchor = sol.g_t[closed][0] if closed.any() else 0.0
    fig, ax = plotting.subplots(figsize=(7, 4))
    ax.plot(t[closed], (sol.g_t[closed] - anchor) * 1e6, ".", ms=1.5)
    finish_axes(
        fig,
        ax,
        out_dir / "slip_displacement.png",
        xlabel="t [s]",
        ylabel="slip displacement [µm]",
        title="tangential displacement of the contact pair (seed Fig. 7)",
        legend=False,
    )
    fig, ax = plotting.subplots(figsize=(7, 4))
    ax.semilogy(t[closed], np.maximum(np.abs(sol.gd_t[closed]), 1e-16), ".", ms=1.5)
    finish_axes(
        fig,
        ax,
        out_dir / "slip_velocity.png",
        xlabel="t [s]",
        ylabel="|slip velocity| [m/s]",
        title="absolute tangential slip velocity (seed Fig. 8)",
        legend=False,
    )


def run(out_dir: pathlib.Path, quick: bool = False, progress: bool = False) -> dict[str, float]:
    """Simulate the seed §3 impact (quick: to 0.45 s, through the first macro-collision);
    write the plots, `impact_stick_slip.npz` and `switches.csv`. **Returns:** the summary."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_end = T_END_QUICK if quick else T_END
    system, contact = impact_beam(N_MODES, mu=MU)
    q0, v0 = impact_beam_state(N_MODES)
    start = time.perf_counter()
    sol = simulate_contact(system, contact, q0, v0, t_end, progress=progress)
    wall = time.perf_counter() - start
    summary = _summary(sol, MU)
    ancf_tc, ancf_pn = _ancf_check(quick)
    summary.update(
        wall_time=wall,
        paper_fixed_steps=int(round(t_end / PAPER_STEP)),
        ancf_first_contact_time=ancf_tc,
        ancf_first_impulse=ancf_pn,
        n_modes=N_MODES,
        t_end=t_end,
        paper_first_normal_peak_time=PAPER_FIRST_PEAK,
    )
    sol.save(out_dir / "impact_stick_slip.npz")
    with open(out_dir / "switches.csv", "w") as fh:
        fh.write("time_s,before,after,cause,energy_before_J,energy_after_J,p_n_Ns,p_t_Ns\n")
        for s in sol.switches:
            fh.write(
                f"{s.time:.12g},{PHASE_NAMES[s.before]},{PHASE_NAMES[s.after]},{s.cause},"
                f"{s.energy_before:.12g},{s.energy_after:.12g},{s.p_n:.8g},{s.p_t:.8g}\n"
            )
    _plots(sol, system, contact, out_dir, MU)
    return summary
