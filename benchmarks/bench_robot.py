r"""Generalized-α on the flexible 3-RRPaR robot: compile time, steps/s, and what a step costs.

    python benchmarks/bench_robot.py [--steps 20] [--elements 2] [--repeat 3] [--rigid]

Model: `flexjax.models.parallel_robot` (E = 116 GPa, h = 0.002 s, ρ∞ = 0.7). Reported:

- compile time of a jitted `lax.scan` of `--steps` solver steps and its steps/s after
  compile (`min(timeit.repeat)`), the mean Newton iterations and Newton matrices per step;
- the parts of one Newton iteration: the residual, its Jacobian (one `jax.jacfwd` over
  the whole system, what `GeneralizedAlpha` does to form a Newton matrix), the dense LU
  solve and the least-squares (SVD) solve used with `redundant=True`;
- three variants of the flexible robot: full Newton with the elastic forces
  differentiated by plain autodiff (`-jax.grad` of the energy, so the whole-system
  `jacfwd` pushes nq + m directions through every beam; patched in for that row only),
  full Newton with the beams' assembled element stiffness matrices (the default,
  `flexjax.bodies._element_forces`: each 24 x 24 element Hessian formed once per
  matrix), and modified Newton (`newton="modified"`) with the element stiffness. The
  first two Newton matrices are compared.

`OPENBLAS_NUM_THREADS` defaults to 1 here: on a shared 2-core machine OpenBLAS's thread
pool spins and a 400x400 LU takes 40x longer.
"""

import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import flexjax  # noqa: E402, F401  (float64)
from flexjax.bodies.ancf3d import AncfBeam3D  # noqa: E402
from flexjax.models.parallel_robot import initial_state, parallel_robot, parallel_robot_solver  # noqa: E402


@contextlib.contextmanager
def whole_system_jacobian():
    """Temporarily give `AncfBeam3D.force` plain autodiff derivatives (`-jax.grad` of the
    energy, differentiated again by the whole-system `jacfwd`) instead of the assembled
    element stiffness matrices."""
    original = AncfBeam3D.force
    AncfBeam3D.force = lambda self, q, v, t: -jax.grad(self.potential_energy)(q)
    try:
        yield
    finally:
        AncfBeam3D.force = original


def _best(f, repeat, number=1):
    return min(timeit.repeat(lambda: jax.block_until_ready(f()), repeat=repeat, number=number)) / number


def _newton_parts(system, solver, state, h, repeat):
    """Times (s) of one residual, its whole-system jacfwd, LU and lstsq solves, and
    the Newton matrix (for comparing variants)."""
    alpha_m, alpha_f, gamma, beta = solver.coefficients()
    nq = state.q.shape[0]
    t1 = jnp.asarray(h)
    beta_h2 = beta * (1 - alpha_f) / (1 - alpha_m) * h**2

    def residual(system, x):
        # the generalized-α residual of `GeneralizedAlpha.step` for the first step
        qdd, lam = x[:nq], x[nq:]
        a1 = ((1 - alpha_f) * qdd + alpha_f * state.qdd - alpha_m * state.a) / (1 - alpha_m)
        q1 = state.q + h * state.v + h**2 * (0.5 - beta) * state.a + h**2 * beta * a1
        v1 = state.v + h * (1 - gamma) * state.a + h * gamma * a1
        Phi, Phi_vjp = jax.vjp(lambda q: system.constraints(q, t1), q1)
        return jnp.concatenate([system.mass(q1) @ qdd + Phi_vjp(lam)[0] - system.forces(q1, v1, t1), Phi / beta_h2])

    x = jnp.concatenate([state.qdd, state.lam])
    res = eqx.filter_jit(residual)
    jac = eqx.filter_jit(lambda s, x: jax.jacfwd(residual, argnums=1)(s, x))
    J = jac(system, x)
    lu = jax.jit(jnp.linalg.solve)
    lsq = jax.jit(lambda A, b: jnp.linalg.lstsq(A, b, rcond=1e-10)[0])
    r = res(system, x)
    lu(J, r), lsq(J, r)
    return dict(
        residual=_best(lambda: res(system, x), repeat, 5),
        jacobian=_best(lambda: jac(system, x), repeat),
        lu=_best(lambda: lu(J, r), repeat, 5),
        lstsq=_best(lambda: lsq(J, r), repeat),
    ), np.asarray(J)


def _loop(system, solver, state, h, steps, repeat):
    """Compile time (s), run time per step (s) and mean Newton iterations of a jitted
    scan of `steps` solver steps."""

    def run(system, state):
        def body(s, k):
            s, info = solver.step(system, k * h, h, s)
            return s, (info.iterations, info.jacobians, info.converged)

        return jax.lax.scan(body, state, jnp.arange(steps, dtype=float))

    f = eqx.filter_jit(run)
    start = time.perf_counter()
    compiled = f.lower(system, state).compile()
    t_compile = time.perf_counter() - start
    _, (iters, jacs, ok) = compiled(system, state)
    if not bool(np.all(np.asarray(ok))):
        raise RuntimeError("bench_robot: a Newton solve did not converge")
    t_run = _best(lambda: compiled(system, state), repeat)
    return t_compile, t_run / steps, float(np.mean(np.asarray(iters))), float(np.mean(np.asarray(jacs)))


def bench(rigid, elements, steps, repeat, newton):
    system = parallel_robot(rigid=rigid, n_elements=elements)
    solver = parallel_robot_solver(rigid, newton=newton)
    q0, v0 = initial_state(system)
    h = 0.002
    state = eqx.filter_jit(solver.init)(system, jnp.asarray(0.0), q0, v0)
    parts, J = _newton_parts(system, solver, state, h, repeat)
    t_compile, t_step, iters, jacs = _loop(system, solver, state, h, steps, repeat)
    return dict(
        nq=system.nq,
        m=system.nconstraints,
        compile=t_compile,
        steps_per_s=1 / t_step,
        iterations=iters,
        jacobians=jacs,
        **parts,
    ), J


def main():
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--elements", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rigid", action="store_true", help="also time the rigid mechanism (least squares)")
    args = p.parse_args()
    print(
        f"device {jax.devices()[0]}, dtype {jnp.zeros(()).dtype}, OPENBLAS_NUM_THREADS="
        f"{os.environ['OPENBLAS_NUM_THREADS']}, {args.elements} elements per rod, {args.steps} steps"
    )
    rows = {}
    with whole_system_jacobian():
        rows["flexible, full Newton, whole-system jacfwd"], J0 = bench(
            False, args.elements, args.steps, args.repeat, "full"
        )
    rows["flexible, full Newton, element stiffness"], J1 = bench(False, args.elements, args.steps, args.repeat, "full")
    rows["flexible, modified Newton, element stiffness"], _ = bench(
        False, args.elements, args.steps, args.repeat, "modified"
    )
    scale = np.max(np.abs(J0))
    print(f"Newton matrices agree: max |difference| / max |entry| = {np.max(np.abs(J1 - J0)) / scale:.1e}")
    if args.rigid:
        for newton in ("full", "modified"):
            rows[f"rigid (redundant), {newton} Newton"], _ = bench(True, args.elements, args.steps, args.repeat, newton)
    head = (
        "model",
        "nq",
        "m",
        "compile s",
        "steps/s",
        "Newton it/step",
        "matrices/step",
        "residual ms",
        "jacfwd ms",
        "LU ms",
        "lstsq ms",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, r in rows.items():
        vals = (
            r["nq"],
            r["m"],
            f"{r['compile']:.1f}",
            f"{r['steps_per_s']:.2f}",
            f"{r['iterations']:.2f}",
            f"{r['jacobians']:.2f}",
            f"{1e3 * r['residual']:.2f}",
            f"{1e3 * r['jacobian']:.1f}",
            f"{1e3 * r['lu']:.2f}",
            f"{1e3 * r['lstsq']:.1f}",
        )
        print(f"| {name} | " + " | ".join(str(v) for v in vals) + " |")


if __name__ == "__main__":
    main()
