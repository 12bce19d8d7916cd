"""Newton matrix of the flexible ANCF pendulum: dense against banded, per matrix.

    python benchmarks/bench_linear.py                        # 16, 64, 128, 256 elements, median of 7
    python benchmarks/bench_linear.py --elements 64 256 --repeat 5 --json linear.json

The model is the very flexible pendulum of `bench_peers.py` (a): `--elements` planar ANCF
elements (axial Gauss order 5, bending 3), the first node pinned, gravity. The matrix is
the generalized-alpha Newton matrix (index 3, rho_inf = 0.9, h = 1 ms) of one step from
the straight beam swinging at random small velocities, n = 4 (elements + 1) + 2 unknowns.

- dense: `jax.jacfwd` of the residual (n forward passes), LU factorization with partial
  pivoting (LAPACK, `jax.scipy.linalg.lu_factor`) and one solve (`lu_solve`);
- banded: `flexjax.solvers._structure.jacobian` (a compressed Jacobian: 2b + 2 forward
  passes for the half-bandwidth b of the reverse Cuthill-McKee order, one of them the
  pattern check), `flexjax.solvers._banded.factor` (block-tridiagonal elimination with
  partial pivoting) and one `banded.solve`.

The residual forms $M\ddot q$ as the solver does, element by element
(`System.mass_product`); a second table times one residual evaluation and the banded
Newton matrix with that product and with the dense `system.mass(q) @ qdd` (an
$n^2$ product that dominated the residual before).

Each stage and the whole (matrix + factorization + one solve) are separate compiled
functions, and so is one evaluation of the residual (the cost scale of one pass); every
time is the median of `--repeat` warm calls, compile times (lowering plus XLA,
`jax.jit(f).lower(...).compile()`) are reported apart. The banded result is
checked against the dense one (relative difference of the solutions). BLAS runs on one
thread unless OPENBLAS_NUM_THREADS (or OMP/MKL) is set: threaded LU on a small shared CPU
is slower (see bench_peers.py).
"""

import argparse
import json
import os

os.environ.setdefault("FLEXJAX_NO_CACHE", "1")  # compile times: never load from the persistent cache
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # read when numpy loads OpenBLAS
import statistics
import time

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
from bench_batch import _table  # same printed-table layout as the other benchmarks

import flexjax as fj
from flexjax.joints.ancf import AncfPin
from flexjax.solvers import _banded as banded, _structure as structure

FLEX = dict(length=1.2, area=0.0018, second_moment=1.215e-8, rho=5540.0, youngs=0.7e6)  # bench_peers.py (a)
G, H, RHO_INF = 9.81, 1e-3, 0.9


def pendulum(n):
    """The pinned flexible pendulum with `n` elements and a state near its start."""
    p = FLEX
    beam = fj.AncfBeam2D(
        p["length"],
        p["rho"],
        p["area"],
        p["second_moment"],
        p["youngs"],
        n,
        strain="stretch",
        axial_order=5,
        bending_order=3,
    )
    system = fj.System([beam], [AncfPin(0, 0)], [fj.Gravity((0.0, -G))])
    q = beam.straight_coordinates()
    v = 0.05 * jnp.asarray(np.random.default_rng(0).standard_normal(q.shape))
    return system, q, v


def newton_residual(system, q, v, product="element"):
    """The residual of one index-3 generalized-alpha step from `(q, v)`, as in
    `GeneralizedAlpha.step`: rows [M qdd + Phi_q^T lam - Q; Phi / (beta' h^2)], with
    M qdd element by element (`product="element"`, as the solver) or from the dense M."""
    alpha_m, alpha_f, gamma, beta = fj.GeneralizedAlpha(rho_inf=RHO_INF).coefficients()
    nq, m = q.shape[0], system.nconstraints
    beta_h2 = beta * (1 - alpha_f) / (1 - alpha_m) * H**2
    a = qdd = jnp.zeros_like(q)

    def residual(x):
        a1 = ((1 - alpha_f) * x[:nq] + alpha_f * qdd - alpha_m * a) / (1 - alpha_m)
        q1 = q + H * v + H**2 * (0.5 - beta) * a + H**2 * beta * a1
        v1 = v + H * (1 - gamma) * a + H * gamma * a1
        Phi, Phi_vjp = jax.vjp(lambda p: system.constraints(p, H), q1)
        inertia = system.mass_product(q1, x[:nq]) if product == "element" else system.mass(q1) @ x[:nq]
        dynamics = inertia + Phi_vjp(x[nq:])[0] - system.forces(q1, v1, H)
        return jnp.concatenate([dynamics, Phi / beta_h2])

    return residual, nq + m


def compiled(fn, *args):
    t = time.perf_counter()
    c = jax.jit(fn).lower(*args).compile()
    return c, time.perf_counter() - t


def median_run(fn, args, repeat):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(n, repeat):
    system, q, v = pendulum(n)
    residual, size = newton_residual(system, q, v)
    st = structure.newton_structure(system, min_size=0, lane_ratio=1)  # force the banded form at 16 elements too
    x = jnp.asarray(np.random.default_rng(1).standard_normal(size))
    r = jnp.asarray(np.random.default_rng(2).standard_normal(size))
    row = dict(
        elements=n,
        n=size,
        bandwidth=st.bandwidth,
        block=st.block,
        passes=st.passes,
        default_structure=structure.newton_structure(system) is not None,
    )
    stages = {
        "dense": dict(
            all=lambda x, r: jax.scipy.linalg.lu_solve(jax.scipy.linalg.lu_factor(jax.jacfwd(residual)(x)), r),
            matrix=jax.jacfwd(residual),
            factor=jax.scipy.linalg.lu_factor,
            solve=lambda F, r: jax.scipy.linalg.lu_solve(F, r),
        ),
        "banded": dict(
            all=lambda x, r: banded.solve(banded.factor(structure.jacobian(residual, x, st)), r),
            matrix=lambda x: structure.jacobian(residual, x, st),
            factor=banded.factor,
            solve=banded.solve,
        ),
    }
    c_residual, _ = compiled(residual, x)
    row["residual_s"] = median_run(c_residual, (x,), repeat)  # one evaluation: the scale of a pass
    solutions = {}
    for kind, f in stages.items():
        c_all, row[f"{kind}_compile_s"] = compiled(f["all"], x, r)
        row[f"{kind}_all_s"] = median_run(c_all, (x, r), repeat)
        solutions[kind] = c_all(x, r)
        c_matrix, row[f"{kind}_matrix_compile_s"] = compiled(f["matrix"], x)
        J = c_matrix(x)
        row[f"{kind}_matrix_s"] = median_run(c_matrix, (x,), repeat)
        c_factor, row[f"{kind}_factor_compile_s"] = compiled(f["factor"], J)
        F = c_factor(J)
        row[f"{kind}_factor_s"] = median_run(c_factor, (J,), repeat)
        c_solve, row[f"{kind}_solve_compile_s"] = compiled(f["solve"], F, r)
        row[f"{kind}_solve_s"] = median_run(c_solve, (F, r), repeat)
        if kind == "banded":
            row["probe_error"] = float(structure.probe_error(J))
    d, b = solutions["dense"], solutions["banded"]
    row["solution_rel_diff"] = float(jnp.max(jnp.abs(d - b)) / jnp.max(jnp.abs(d)))
    # the same residual and banded matrix with the dense mass product
    dense_residual, _ = newton_residual(system, q, v, product="dense")
    c_residual, row["residual_dense_mass_compile_s"] = compiled(dense_residual, x)
    row["residual_dense_mass_s"] = median_run(c_residual, (x,), repeat)
    row["mass_product_rel_diff"] = float(jnp.max(jnp.abs(c_residual(x) - residual(x))) / jnp.max(jnp.abs(residual(x))))
    c_matrix, _ = compiled(lambda x: structure.jacobian(dense_residual, x, st), x)
    row["banded_matrix_dense_mass_s"] = median_run(c_matrix, (x,), repeat)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--elements", type=int, nargs="+", default=[16, 64, 128, 256])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", default=None, help="write every number to this file")
    a = parser.parse_args(argv)
    dev = jax.devices()[0]
    print(
        f"flexjax {fj.__version__}, jax {jax.__version__}, {dev.platform}:{dev.device_kind}, "
        f"{os.cpu_count()} CPU cores, float64, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; "
        f"median of {a.repeat} warm calls; load average {os.getloadavg()[0]:.1f} at start\n",
        flush=True,
    )
    rows = [bench(n, a.repeat) for n in a.elements]
    ms = lambda key: lambda r: f"{1e3 * r[key]:.3f}"
    print("Per Newton matrix (matrix + factorization + one solve) and per stage, ms:")
    print(
        _table(
            rows,
            [
                ("elements", lambda r: str(r["elements"])),
                ("n", lambda r: str(r["n"])),
                ("b", lambda r: str(r["bandwidth"])),
                ("passes dense/banded", lambda r: f"{r['n']}/{r['passes']}"),
                ("dense all", ms("dense_all_s")),
                ("banded all", ms("banded_all_s")),
                ("speed-up", lambda r: f"{r['dense_all_s'] / r['banded_all_s']:.1f}x"),
                ("banded us/element", lambda r: f"{1e6 * r['banded_all_s'] / r['elements']:.1f}"),
                ("residual", ms("residual_s")),
                ("dense jacfwd", ms("dense_matrix_s")),
                ("banded jacobian", ms("banded_matrix_s")),
                ("dense LU", ms("dense_factor_s")),
                ("banded factor", ms("banded_factor_s")),
                ("dense solve", ms("dense_solve_s")),
                ("banded solve", ms("banded_solve_s")),
            ],
        )
    )
    print("\nThe mass product M qdd in the residual: dense M (nq^2) or element by element, ms:")
    print(
        _table(
            rows,
            [
                ("elements", lambda r: str(r["elements"])),
                ("residual, dense M", ms("residual_dense_mass_s")),
                ("residual, element-wise", ms("residual_s")),
                ("speed-up", lambda r: f"{r['residual_dense_mass_s'] / r['residual_s']:.1f}x"),
                ("banded jacobian, dense M", ms("banded_matrix_dense_mass_s")),
                ("banded jacobian, element-wise", ms("banded_matrix_s")),
                ("speed-up ", lambda r: f"{r['banded_matrix_dense_mass_s'] / r['banded_matrix_s']:.1f}x"),
                ("|r_elem - r_dense| / |r_dense|", lambda r: f"{r['mass_product_rel_diff']:.1e}"),
            ],
        )
    )
    print("\nCompile (s) of the whole, and checks:")
    print(
        _table(
            rows,
            [
                ("elements", lambda r: str(r["elements"])),
                ("dense compile", lambda r: f"{r['dense_compile_s']:.2f}"),
                ("banded compile", lambda r: f"{r['banded_compile_s']:.2f}"),
                (
                    "banded: matrix/factor/solve",
                    lambda r: "/".join(f"{r[f'banded_{k}_compile_s']:.2f}" for k in ("matrix", "factor", "solve")),
                ),
                ("banded by default", lambda r: "yes" if r["default_structure"] else "no (n < 100 or too wide)"),
                ("probe error", lambda r: f"{r['probe_error']:.1e}"),
                ("|x_banded - x_dense| / |x_dense|", lambda r: f"{r['solution_rel_diff']:.1e}"),
            ],
        )
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
