r"""The flexible-link flexible-joint (FLFJ) arm of seed 000 (Zhang et al. 2022), sections 3.1-3.4.

**Rod** (the paper's Table 1 is missing): a slender circular steel rod, diameter 2 mm,
E = 207 GPa, $\rho$ = 7850 kg/m³, l = 1 m, so EI = 0.16258 N m², $\rho A$ = 0.024662 kg/m,
EA = 6.50e5 N and n = EI/l = 0.1626 N m, the middle of the paper's three n values
(0.0813, 0.1626, 0.3252 are this rod at l = 2, 1, 0.5 m).

**Arm** (`flfj_arm`): `ModalHubBeam(root="elastic")` with this rod, hub = motor rotor of
inertia 0.002 kg m², joint stiffness k, transverse modes only (the first axial mode is at
1.28 kHz and would make the ODE stiff for no visible effect on a planar slewing move),
undamped. **Controller** (seed eq. 59): PD on the hub angle,
$\tau = K_p(u_{IS}(t) - \theta) - K_d\dot\theta$, $K_p = 0.6$, $K_d = 0.3$, tracking a
reference shaped by an input shaper (`simulate_flfj_arm`), or with gains and ZVD half
periods as tunable parameters (`flfj_tuning_objective`).
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..analysis.beam_fe import beam_fe_matrices
from ..bodies import ModalHubBeam
from ..control import PD, CoordinateControl, Ramp, RestToRest, Shaper
from ..solvers import simulate_ode
from ..system import System

DIAMETER = 2e-3  # m
YOUNG = 207e9  # Pa
DENSITY = 7850.0  # kg/m^3
LENGTH = 1.0  # m
EI = YOUNG * np.pi * DIAMETER**4 / 64  # N m^2
RHO_A = DENSITY * np.pi * DIAMETER**2 / 4  # kg/m
EA = YOUNG * np.pi * DIAMETER**2 / 4  # N
ROTOR_INERTIA = 0.002  # kg m^2 (seed: the rotor of the ADAMS model)
KP, KD = 0.6, 0.3  # N m/rad, N m s/rad (seed 3.4)
N_MODES = 4
N_SAVE = 1201

# the tuning objective (`flfj_tuning_objective`): a cycloidal move of 1 rad over
# TUNING_MOVE, fixed steps TUNING_DT, and the scales of its three terms
TUNING_MOVE = 1.0  # s
TUNING_DT = 2.5e-3  # s
SCALE_TIP, SCALE_THETA, SCALE_TORQUE, MU = 1e-3, 1e-2, 1e-2, 1e-2


def flfj_arm(k: float, n_modes: int = N_MODES) -> ModalHubBeam:
    """The FLFJ plant: rotor/hub 0.002 kg m², the 2 mm steel rod, undamped, no axial modes.

    **Arguments:** `k`: joint stiffness (N m/rad); `n_modes`: transverse modes.

    **Returns:** the `ModalHubBeam` (elastic root).
    """
    return ModalHubBeam(ROTOR_INERTIA, LENGTH, RHO_A, EA, EI, k, 0.0, n_axial=0, n_transverse=n_modes)


def flfj_cantilever_frequencies(n_modes: int = N_MODES):
    r"""Link frequencies (Hz) of the Spong model of the arm: the rod clamped to its hub
    (the $k \to \infty$ limit of the FLFJ arm)."""
    return ModalHubBeam(0.0, LENGTH, RHO_A, EA, EI, n_axial=0, n_transverse=n_modes, root="clamped").frequencies()


def flfj_fe_mode_shapes(k: float, n: int, n_elements: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Mode shapes of the rod with joint stiffness `k` from the Hermite-cubic finite
    elements of `flexjax.analysis.beam_fe_matrices`, at the nodes, normalized like the
    modal ones (unit mean square, tip > 0).

    **Arguments:** `k` (N m/rad); `n` modes; `n_elements` elements.

    **Returns:** `(s, shapes)`, nodal coordinates $x/l$ and shapes of shape `(nodes, n)`.
    """
    K, M = beam_fe_matrices(EI, RHO_A, LENGTH, k, n_elements)
    Lc = np.linalg.cholesky(M)
    Li = np.linalg.inv(Lc)
    _, vecs = np.linalg.eigh(Li @ K @ Li.T)
    modes = Li.T @ vecs[:, :n]  # M-orthonormal eigenvectors
    w = np.concatenate([np.zeros((1, n)), modes[1::2]])  # nodal deflections (w_0 = 0, pinned)
    w = w / np.sqrt(np.diag(modes.T @ M @ modes) / (RHO_A * LENGTH))[None, :]  # (1/l) int phi^2 = 1
    w = w * np.sign(w[-1])[None, :]
    return np.linspace(0.0, 1.0, n_elements + 1), w


def simulate_flfj_arm(body, shaper, duration, t1, kp=KP, kd=KD, n_save=N_SAVE, rtol=1e-8):
    """Closed-loop run of `body` (e.g. `flfj_arm(k)`) with a PD on the hub angle tracking
    a 1 rad ramp over `duration` (s) through `shaper` (a `Shaper`), from rest to `t1` (s).

    **Arguments:** `kp`, `kd`: PD gains; `n_save` saved rows; `rtol` of the Tsit5 run.

    **Returns:** `(t, theta, tip, torque)` as numpy arrays (s, rad, m, N m); `tip` is the
    transverse tip deflection $w_2(l)$ in the hub frame.
    """
    law = PD(kp, kd, Ramp(1.0, duration), shaper)
    system = System([body], [], [CoordinateControl(0, 0, law)])
    n = body.ncoords
    ts = jnp.linspace(0.0, t1, n_save)
    tr = simulate_ode(system, jnp.zeros(n), jnp.zeros(n), t1, rtol=rtol, atol=rtol * 1e-2, ts=ts)
    tip, torque = _outputs(body, law, tr.t, tr.q, tr.v)
    return np.asarray(tr.t), np.asarray(tr.q[:, 0]), np.asarray(tip), np.asarray(torque)


@eqx.filter_jit
def _outputs(body, law, t, q, v):
    tip = jax.vmap(lambda qq: body.deformation(qq, jnp.array([LENGTH]))[0, 1])(q)
    return tip, jax.vmap(law)(t, q[:, 0], v[:, 0])


def shaper_from_half_periods(h) -> Shaper:
    """Convolution of undamped ZVD shapers with half periods `h` (s): impulses
    [1/4, 1/2, 1/4] at [0, h_i, 2 h_i] per mode (seed eq. 56-57), differentiable in `h`."""
    amp = jnp.array([0.25, 0.5, 0.25])
    shaper = Shaper(jnp.stack([0.0 * h[0], h[0], 2 * h[0]]), amp)
    for hi in h[1:]:
        shaper = shaper.convolve(Shaper(jnp.stack([0.0 * hi, hi, 2 * hi]), amp))
    return shaper


def flfj_tuning_objective(body, t_end: float, t_window: float, dt: float = TUNING_DT, solver=None):
    r"""Objective for tuning the PD gains and ZVD half periods of the FLFJ arm `body`.

    The reference is the cycloidal `RestToRest` move of 1 rad over `TUNING_MOVE`,
    shaped by `shaper_from_half_periods(exp(log_h))`; the run is fixed-step, so the loss
    is a smooth function of the parameters:
    $J = \overline{w_{tip}^2}/s_w^2 + \overline{(\theta - 1)^2}/s_\theta^2 + \mu\,\overline{\tau^2}/s_\tau^2$,
    the first two means over $t \ge$ `t_window`, the torque's over the whole run;
    $s_w$ = `SCALE_TIP`, $s_\theta$ = `SCALE_THETA`, $s_\tau$ = `SCALE_TORQUE`, $\mu$ = `MU`.

    **Arguments:** `t_end`, `t_window` (s); `dt` fixed step (s); `solver` a diffrax
    solver (default Tsit5).

    **Returns:** `(loss, parts)`: `loss(params) -> J` and
    `parts(params) -> (tip_ms, theta_ms, torque_ms)` for
    `params = {"log_kp", "log_kd", "log_h"}` (`log_h`: one entry per mode of `body`);
    `loss.response(params)` gives the run `(t, theta, tip, torque)`.
    """
    solver = diffrax.Tsit5() if solver is None else solver
    n = body.ncoords
    nsteps = round(t_end / dt)
    t_final = nsteps * dt
    ts = np.linspace(0.0, t_final, nsteps + 1)
    window = jnp.asarray(ts >= t_window, float)

    @eqx.filter_jit
    def response(params):
        """Fixed-step closed-loop run: `(t, theta, tip, torque)`."""
        law = PD(
            jnp.exp(params["log_kp"]),
            jnp.exp(params["log_kd"]),
            RestToRest(1.0, TUNING_MOVE),
            shaper_from_half_periods(jnp.exp(params["log_h"])),
        )
        system = System([body], [], [CoordinateControl(0, 0, law)])
        tr = simulate_ode(
            system,
            jnp.zeros(n),
            jnp.zeros(n),
            t_final,
            solver=solver,
            dt0=dt,
            rtol=None,
            ts=ts,
            consistent=False,
            throw=False,
        )
        tip = jax.vmap(lambda q: body.deformation(q, jnp.array([LENGTH]))[0, 1])(tr.q)
        tau = jax.vmap(law)(tr.t, tr.q[:, 0], tr.v[:, 0])
        return tr.t, tr.q[:, 0], tip, tau

    def parts(params):
        _, theta, tip, tau = response(params)
        w = window / jnp.sum(window)
        return w @ tip**2, w @ (theta - 1.0) ** 2, jnp.mean(tau**2)

    def loss(params):
        tip_ms, th_ms, tau_ms = parts(params)
        return tip_ms / SCALE_TIP**2 + th_ms / SCALE_THETA**2 + MU * tau_ms / SCALE_TORQUE**2

    loss.response = response
    return loss, parts
