r"""Reference finite-element model of the elastically constrained beam (planar
Euler-Bernoulli, Hermite cubic elements, consistent mass), independent of the modal
solution in `flfj.py`.

Nodal unknowns $[w_j, w'_j]$; element matrices

$$K_e = \frac{EI}{h^3}\begin{bmatrix}12 & 6h & -12 & 6h\\ & 4h^2 & -6h & 2h^2\\
& & 12 & -6h\\ \text{sym} & & & 4h^2\end{bmatrix},\quad
M_e = \frac{\rho A h}{420}\begin{bmatrix}156 & 22h & 54 & -13h\\ & 4h^2 & 13h & -3h^2\\
& & 156 & -22h\\ \text{sym} & & & 4h^2\end{bmatrix}.$$

Root: $w_0 = 0$ (pin) and a rotational spring $k$ on $w'_0$ (`root="elastic"`), or
$w_0 = w'_0 = 0$ (`root="clamped"`); free tip. Plain numpy: the experiments use it
without scipy.
"""

import numpy as np


def beam_fe_matrices(ei, rho_a, length, k=0.0, n_elements: int = 40, root: str = "elastic"):
    """Stiffness and mass matrices `(K, M)` of the constrained beam (numpy, float64).

    **Arguments:** `ei` (N m²), `rho_a` (kg/m), `length` (m), `k` root spring (N m/rad,
    ignored for `root="clamped"`), `n_elements` (>= 1), `root` `"elastic"` or `"clamped"`.
    """
    if root not in ("elastic", "clamped"):
        raise ValueError(f"beam_fe_matrices: `root` must be 'elastic' or 'clamped', got {root!r}.")
    if not (isinstance(n_elements, int) and n_elements >= 1):
        raise ValueError(f"beam_fe_matrices: `n_elements` must be a positive int, got {n_elements!r}.")
    ei, rho_a, length, k = (float(x) for x in (ei, rho_a, length, k))
    if min(ei, rho_a, length) <= 0 or k < 0:
        raise ValueError("beam_fe_matrices: ei, rho_a, length must be > 0 and k >= 0.")
    h = length / n_elements
    ke = (
        ei
        / h**3
        * np.array(
            [
                [12, 6 * h, -12, 6 * h],
                [6 * h, 4 * h**2, -6 * h, 2 * h**2],
                [-12, -6 * h, 12, -6 * h],
                [6 * h, 2 * h**2, -6 * h, 4 * h**2],
            ]
        )
    )
    me = (
        rho_a
        * h
        / 420
        * np.array(
            [
                [156, 22 * h, 54, -13 * h],
                [22 * h, 4 * h**2, 13 * h, -3 * h**2],
                [54, 13 * h, 156, -22 * h],
                [-13 * h, -3 * h**2, -22 * h, 4 * h**2],
            ]
        )
    )
    ndof = 2 * (n_elements + 1)
    K, M = np.zeros((ndof, ndof)), np.zeros((ndof, ndof))
    for e in range(n_elements):
        sl = slice(2 * e, 2 * e + 4)
        K[sl, sl] += ke
        M[sl, sl] += me
    if root == "elastic":
        K[1, 1] += k  # joint spring on the root slope
        keep = np.arange(1, ndof)  # pin: w_0 = 0
    else:
        keep = np.arange(2, ndof)
    return K[np.ix_(keep, keep)], M[np.ix_(keep, keep)]


def beam_fe_frequencies(ei, rho_a, length, k=0.0, n: int = 4, n_elements: int = 40, root: str = "elastic"):
    """Lowest `n` natural frequencies (Hz) of the FE model, by Cholesky reduction of
    $K x = \\omega^2 M x$ to a symmetric eigenproblem (`numpy.linalg.eigvalsh`).
    For `k = 0` the first one is the rigid mode (0 up to round-off)."""
    K, M = beam_fe_matrices(ei, rho_a, length, k, n_elements, root)
    L = np.linalg.cholesky(M)
    Li = np.linalg.inv(L)
    lam = np.linalg.eigvalsh(Li @ K @ Li.T)
    return np.sqrt(np.maximum(lam[:n], 0.0)) / (2 * np.pi)


def hub_beam_fe_matrices(
    hub_inertia, ei, rho_a, length, k=0.0, n_elements: int = 40, root: str = "elastic", rotor_inertia=None
):
    """Linear FE model of the whole arm at rest, for checking linearized hub-beam bodies.

    Absolute small rotations; the hub (inertia `hub_inertia`) turns by `theta_h` about the
    pivot, which is also the beam's root node (`w_0 = 0`).

    - `root="elastic"` (FLFJ): unknowns `[theta_h, w'_0, w_1, w'_1, ...]`, the joint spring
      `k` acts on the relative rotation `w'_0 - theta_h`.
    - `root="clamped"`: the beam slope at the root is the hub angle, unknowns
      `[theta_h, w_1, w'_1, ...]`; with `rotor_inertia` a rotor angle `theta_m` comes
      first and the spring `k` joins rotor and hub (the Spong model).

    **Returns:** `(K, M)`.
    """
    Kb, Mb = beam_fe_matrices(ei, rho_a, length, 0.0, n_elements, "elastic")  # pinned: [w'_0, w_1, ...]
    k = float(k)
    if root == "elastic":
        n = Kb.shape[0] + 1
        K, M = np.zeros((n, n)), np.zeros((n, n))
        K[1:, 1:], M[1:, 1:] = Kb, Mb
        K[np.ix_([0, 1], [0, 1])] += k * np.array([[1.0, -1.0], [-1.0, 1.0]])
        M[0, 0] += float(hub_inertia)
        return K, M
    K, M = Kb.copy(), Mb.copy()  # w'_0 is the hub angle
    M[0, 0] += float(hub_inertia)
    if rotor_inertia is None:
        return K, M
    n = K.shape[0] + 1
    K2, M2 = np.zeros((n, n)), np.zeros((n, n))
    K2[1:, 1:], M2[1:, 1:] = K, M
    K2[np.ix_([0, 1], [0, 1])] += k * np.array([[1.0, -1.0], [-1.0, 1.0]])
    M2[0, 0] = float(rotor_inertia)
    return K2, M2
