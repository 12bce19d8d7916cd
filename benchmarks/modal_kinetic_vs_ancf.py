"""`ModalHubBeam(kinetic="paper")` and `kinetic="exact"` against a planar ANCF reference.

The FLFJ arm of `flexjax/models/flfj_arm.py` (steel rod, d = 2 mm, l = 1 m, rotor
0.002 kg m², joint spring k), driven open loop by a torque pulse
tau(t) = tau0 sin²(pi t / 0.5 s) on the hub for 0.5 s, then free to 2 s. Reference: the
same rod as `AncfBeam2D` cable elements pinned at the hub axis, a rigid hub, and the
joint spring between the hub angle and the slope angle of the beam's first node
(generalized-α, rho_inf = 0.9, h = 2.5e-4 s). Modal runs: Tsit5, rtol 1e-10, no axial
modes. Printed: the largest transverse tip deflection in the hub frame and the largest
difference of each modal run from the reference, relative to the reference's largest
deflection, plus the wall time of each run (compile included).

    python benchmarks/modal_kinetic_vs_ancf.py --tau0 0.04            # 0.14 m tip bending
    python benchmarks/modal_kinetic_vs_ancf.py --tau0 0.04 --elements 16
"""

import argparse
import time
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import flexjax as fj
from flexjax.bodies.base import planar_angle
from flexjax.bodies.modal_beam import ModalHubBeam
from flexjax.forces.base import AbstractForce

D, E, RHO, L, ROTOR = 2e-3, 207e9, 7850.0, 1.0, 0.002
EI, RHO_A, EA = E * np.pi * D**4 / 64, RHO * np.pi * D**2 / 4, E * np.pi * D**2 / 4
PULSE, T_END = 0.5, 2.0


class Pulse(eqx.Module):
    amp: jax.Array

    def __call__(self, t):
        return jnp.where(t < PULSE, self.amp * jnp.sin(jnp.pi * t / PULSE) ** 2, 0.0)


class JointSpring(AbstractForce):
    """Rotational spring $\\tfrac12 k(\\theta_{node 0} - \\theta_{hub})^2$ between a rigid
    hub (body 0) and the first node of an ANCF beam (body 1)."""

    k: jax.Array
    bodies: tuple[int, ...] = eqx.field(static=True, default=(0, 1))
    dim: ClassVar[int] = 2

    def _relative_angle(self, bodies, qs):
        th = planar_angle(bodies[0].axes(qs[0]))
        s = bodies[1].node_slope(qs[1], 0)
        c, sn = jnp.cos(th), jnp.sin(th)
        return jnp.arctan2(c * s[1] - sn * s[0], c * s[0] + sn * s[1])

    def force(self, bodies, qs, vs, t):
        return jax.grad(lambda *q: -self.potential_energy(bodies, q, t), argnums=(0, 1))(*qs)

    def potential_energy(self, bodies, qs, t):
        return 0.5 * self.k * self._relative_angle(bodies, qs) ** 2


def modal(kinetic, tau0, k, modes, ts):
    beam = ModalHubBeam(ROTOR, L, RHO_A, EA, EI, k, 0.0, n_axial=0, n_transverse=modes, kinetic=kinetic)
    system = fj.System([beam], [], [fj.AppliedTorque(0, Pulse(jnp.asarray(tau0)))])
    q0 = jnp.zeros(beam.ncoords)
    tr = fj.simulate_ode(system, q0, q0, T_END, ts=ts, rtol=1e-10, atol=1e-12, max_steps=10**6)
    return np.asarray(jax.vmap(lambda q: beam.deformation(q, jnp.array([L]))[0, 1])(tr.q))


def ancf(tau0, k, elements, ts):
    beam = fj.AncfBeam2D(L, RHO_A, 1.0, EI / EA, EA, elements)
    system = fj.System(
        [fj.RigidBody2D(1.0, ROTOR), beam],
        [fj.RevoluteJoint(0, (0.0, 0.0), None, (0.0, 0.0)), fj.AncfPin(1, 0, None, (0.0, 0.0))],
        [fj.AppliedTorque(0, Pulse(jnp.asarray(tau0))), JointSpring(jnp.asarray(k))],
    )
    q0 = jnp.concatenate([jnp.zeros(3), beam.straight_coordinates()])
    tr = fj.simulate(
        system, q0, jnp.zeros_like(q0), T_END, 2.5e-4, save_every=40, solver=fj.GeneralizedAlpha(rho_inf=0.9)
    )
    th, tip = tr.q[:, 2], tr.q[:, -4:-2]
    w = -jnp.sin(th) * tip[:, 0] + jnp.cos(th) * tip[:, 1]
    return np.interp(np.asarray(ts), np.asarray(tr.t), np.asarray(w))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau0", type=float, default=0.04, help="torque pulse amplitude (N m)")
    parser.add_argument("--k", type=float, default=1.0, help="joint spring (N m/rad)")
    parser.add_argument("--modes", type=int, default=4, help="transverse modes of the modal beam")
    parser.add_argument("--elements", type=int, default=8, help="ANCF elements of the reference")
    args = parser.parse_args()
    ts = jnp.linspace(0.0, T_END, 201)
    print(f"device {jax.devices()[0].platform}, dtype {jnp.zeros(()).dtype}")
    t = time.perf_counter()
    ref = ancf(args.tau0, args.k, args.elements, ts)
    print(f"ANCF ({args.elements} elements): max |w_tip| = {np.abs(ref).max():.5f} m ({time.perf_counter() - t:.0f} s)")
    for kinetic in ("paper", "exact"):
        t = time.perf_counter()
        w = modal(kinetic, args.tau0, args.k, args.modes, ts)
        rel = np.abs(w - ref).max() / np.abs(ref).max()
        print(
            f"kinetic={kinetic!r}: max |w_tip| = {np.abs(w).max():.5f} m, max |w - w_ANCF| / max |w_ANCF| = "
            f"{rel:.4f} ({time.perf_counter() - t:.0f} s)"
        )


if __name__ == "__main__":
    main()
