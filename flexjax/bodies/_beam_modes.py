r"""Modes of a uniform Euler-Bernoulli beam for the modal beam bodies (seed 000,
section 2.1, 3.3): the elastically constrained beam (pinned at $x = 0$ with a root spring
$k$, free at $x = l$) and the fixed-free rod.

With $\gamma = \beta l$ and $\kappa = kl/EI$ the frequency equation (seed eq. 32) is
solved in the bounded form `frequency_function` by grid bracketing, bisection and a
Newton polish (`bracket_roots`); `refine_roots` re-attaches the implicit-function
derivatives $d\gamma/d\kappa$. The transverse shapes are built from the free end,
$\tilde\phi = a(\cos u + \cosh u) + b(\sin u + \sinh u)$, $u = \gamma(1 - x/l)$, with
only bounded exponentials (`mode_coefficients`, `eval_modes`), normalized to
$\frac1l\int_0^l \phi_i^2\,dx = 1$, $\phi_i(l) > 0$; the rigid mode ($\kappa = 0$) is
$\sqrt3\,x/l$. Axial modes: $\sqrt2\sin((2i - 1)\pi x/2l)$ (seed eq. 39).
`flexjax.analysis.flfj` documents the derivation and re-exports these functions.
"""

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float

GRID_STEP = 0.02  # bracketing grid step in gamma (roots are > 2 apart)
_NBISECT = 30  # bracket width 0.02 * 2**-30 ~ 2e-11 before Newton
_NNEWTON = 2


def exp_parts(gamma):
    """tanh, sech from exp(-gamma) only (no overflow for large gamma)."""
    e = jnp.exp(-gamma)
    e2 = e * e
    return (1 - e2) / (1 + e2), 2 * e / (1 + e2)


def frequency_function(gamma: Float[ArrayLike, "..."], kappa: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
    r"""Scaled frequency equation $F(\gamma; \kappa)$ of the elastically constrained beam.

    $F = w\,(\cos\gamma\tanh\gamma - \sin\gamma) + (1 - w)(\cos\gamma + \operatorname{sech}\gamma)$,
    $w = \gamma/(\gamma + \kappa)$: seed eq. 32 multiplied by $\gamma / ((\gamma + \kappa)\cosh\gamma) > 0$,
    so it has the same positive roots. `kappa` $= kl/EI \ge 0$ may be `inf` (cantilever).
    Undefined at $\gamma = \kappa = 0$.
    """
    gamma = jnp.asarray(gamma, float)
    tanh, sech = exp_parts(gamma)
    w = gamma / (gamma + kappa)
    return w * (jnp.cos(gamma) * tanh - jnp.sin(gamma)) + (1 - w) * (jnp.cos(gamma) + sech)


@functools.partial(jax.jit, static_argnums=1)  # eager construction of bodies: compile once
def _bracket_and_refine(kappa, n):
    """Roots for a concrete-or-traced but gradient-free `kappa` (see module docstring)."""
    top = (n + 0.5) * math.pi  # the n-th root is below the n-th cantilever root < (n - 1/2) pi + 0.31
    npts = math.ceil(top / GRID_STEP) + 1
    grid = jnp.linspace(0.0, top, npts)
    # F(0+) > 0 for kappa > 0; for kappa = 0 the bracket [0, h] then closes on the rigid mode
    pos = jnp.concatenate([jnp.ones((1,), bool), frequency_function(grid[1:], kappa) >= 0])
    change = pos[:-1] != pos[1:]
    # index of the i-th sign change (first cumsum reaching i: fixed shapes, vmap-friendly)
    idx = jnp.argmax(jnp.cumsum(change)[None, :] >= jnp.arange(1, n + 1)[:, None], axis=1)
    lo, hi, pos_lo = grid[idx], grid[idx + 1], pos[idx]

    def bisect(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        same = (frequency_function(mid, kappa) >= 0) == pos_lo
        return jnp.where(same, mid, lo), jnp.where(same, hi, mid)

    lo, hi = jax.lax.fori_loop(0, _NBISECT, bisect, (lo, hi))
    g = 0.5 * (lo + hi)
    dF = jax.vmap(jax.grad(frequency_function), in_axes=(0, None))
    for _ in range(_NNEWTON):
        step = frequency_function(g, kappa) / dF(g, kappa)
        new = g - step
        g = jnp.where(jnp.isfinite(new) & (new >= lo) & (new <= hi), new, g)  # stay in the bracket
    return g


def bracket_roots(kappa: Float[ArrayLike, ""], n: int) -> Float[Array, " n"]:
    r"""First `n` roots by grid bracketing, bisection and Newton polish; no derivatives
    (the result is `stop_gradient`-ed). Use `flfj_roots` for differentiable roots."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"flfj_roots: `n` must be a positive int, got {n!r}.")
    kap0 = jax.lax.stop_gradient(jnp.asarray(kappa, float))
    g0 = _bracket_and_refine(kap0, n)
    return jax.lax.stop_gradient(jnp.where((kap0 == 0) & (jnp.arange(n) == 0), 0.0, g0))


def refine_roots(
    gamma: Float[ArrayLike, " n"], kappa: Float[ArrayLike, ""]
) -> tuple[Float[Array, " n"], Float[Array, " n"]]:
    r"""Attach derivatives to known roots: one Newton step from `gamma` (treated as a
    constant) on $F(\cdot\,; \kappa)$.

    At a root the value is unchanged and the derivative is the implicit-function one,
    $d\gamma/d\kappa = -F_\kappa/F_\gamma$. The rigid mode ($\gamma = 0$, $\kappa = 0$) stays 0.

    **Returns:** `(gamma, residual)`, `residual` the relative Newton step
    $|F/F_\gamma|/\gamma_0$ (0 at the rigid mode, `inf` for a zero root with
    $\kappa > 0$): values above ~1e-8 mean `gamma` are not roots for this `kappa`.
    """
    kappa = jnp.asarray(kappa, float)
    g0 = jax.lax.stop_gradient(jnp.asarray(gamma, float))
    kap0 = jax.lax.stop_gradient(kappa)
    rigid = g0 == 0
    g_safe = jnp.where(rigid, 1.0, g0)
    k_safe = jnp.where(rigid, 1.0, kappa)  # double-where: F(0; 0) is 0/0
    dFdg = jax.lax.stop_gradient(jax.vmap(jax.grad(frequency_function), in_axes=(0, None))(g_safe, kap0))
    F = frequency_function(g_safe, k_safe)
    g = g_safe - F / dFdg
    step = jnp.abs(jax.lax.stop_gradient(F) / dFdg) / g_safe  # relative: fine for tiny roots too
    residual = jnp.where(rigid, jnp.where(kap0 == 0, 0.0, jnp.inf), step)
    return jnp.where(rigid, 0.0, g), residual


class ModeCoefficients(NamedTuple):
    """Coefficients of the transverse shapes (see `mode_coefficients`)."""

    gamma: Float[Array, " n"]
    a: Float[Array, " n"]
    b: Float[Array, " n"]
    c_plus: Float[Array, " n"]
    c_minus: Float[Array, " n"]
    scale: Float[Array, " n"]
    rigid: Bool[Array, " n"]


def _raw_shape(c: ModeCoefficients, s, deriv):
    """Unnormalized shape (or s-derivative) at points `s`, shape (len(s), n)."""
    g, a, b, cp, cm = (x[None, :] for x in (c.gamma, c.a, c.b, c.c_plus, c.c_minus))
    u = g * (1 - s[:, None])
    ep, em = jnp.exp(u - g), jnp.exp(-u)
    cu, su = jnp.cos(u), jnp.sin(u)
    if deriv == 0:
        return a * cu + b * su + cp * ep + cm * em
    if deriv == 1:  # d/ds = -gamma d/du
        return -g * (-a * su + b * cu + cp * ep - cm * em)
    return g**2 * (-a * cu - b * su + cp * ep + cm * em)


def mode_coefficients(gamma: Float[ArrayLike, " n"]) -> ModeCoefficients:
    r"""Coefficients of $\tilde\phi = a\cos u + b\sin u + c_+ e^{u - \gamma} + c_- e^{-u}$,
    $u = \gamma(1 - s)$, and the normalizing factor (module docstring). Every term is
    bounded by a few units, so nothing cancels catastrophically for high modes."""
    gamma = jnp.atleast_1d(jnp.asarray(gamma, float))
    rigid = gamma == 0
    g = jnp.where(rigid, 1.0, gamma)  # double-where: no NaN gradients through the rigid branch
    tanh, sech = exp_parts(g)
    a = jnp.sin(g) * sech + tanh
    b = -(jnp.cos(g) * sech + 1)
    # (a + b)/2 e^u = c_plus e^(u - g), with c_plus = (a + b) e^g / 2 in closed form
    c_plus = (jnp.sin(g) - jnp.cos(g) - jnp.exp(-g)) / (1 + jnp.exp(-2 * g))
    c_minus = 0.5 * (a - b)
    c = ModeCoefficients(g, a, b, c_plus, c_minus, jnp.ones_like(g), rigid)
    nodes, weights = gauss_legendre(quadrature_order(gamma.shape[0]))
    return c._replace(scale=1 / jnp.sqrt(weights @ _raw_shape(c, nodes, 0) ** 2))


def eval_modes(c: ModeCoefficients, s: Float[ArrayLike, " m"], deriv: int = 0) -> Float[Array, "m n"]:
    """Normalized transverse shapes (or `deriv`-th s-derivative) from `mode_coefficients`."""
    if deriv not in (0, 1, 2):
        raise ValueError(f"transverse_modes: `deriv` must be 0, 1 or 2, got {deriv!r}.")
    s = jnp.atleast_1d(jnp.asarray(s, float))
    root3 = math.sqrt(3.0)
    rigid_val = {0: root3 * s[:, None], 1: root3 * jnp.ones_like(s)[:, None], 2: jnp.zeros_like(s)[:, None]}[deriv]
    return jnp.where(c.rigid[None, :], rigid_val, c.scale[None, :] * _raw_shape(c, s, deriv))


class ShapeTables(NamedTuple):
    r"""Dimensionless transverse-mode data at the Gauss nodes $s_g$ of `gauss_legendre(order)`
    (a beam of unit length): $\phi$, $d\phi/ds$, $d^2\phi/ds^2$ at the nodes,
    $d\phi/ds$ at the root, and $S(s_g) = \int_0^{s_g} \phi'^T\phi'\,ds$."""

    phi: Float[Array, "g n"]
    dphi: Float[Array, "g n"]
    ddphi: Float[Array, "g n"]
    dphi_root: Float[Array, " n"]
    S: Float[Array, "g n n"]


@functools.partial(jax.jit, static_argnums=0)
def _shape_tables(order: int, gamma):
    c = mode_coefficients(gamma)
    s, _ = gauss_legendre(order)
    dphi = eval_modes(c, s, 1)
    S = jnp.einsum("gh,hi,hj->gij", integration_matrix(order), dphi, dphi)
    return ShapeTables(eval_modes(c, s), dphi, eval_modes(c, s, 2), eval_modes(c, jnp.zeros(1), 1)[0], S)


def shape_tables(gamma: Float[ArrayLike, " n"], order: int) -> ShapeTables:
    """`ShapeTables` of the roots `gamma` on `order` Gauss nodes (differentiable in `gamma`)."""
    return _shape_tables(order, jnp.atleast_1d(jnp.asarray(gamma, float)))


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def cached_shape_tables(order: int, cache: ShapeTables, gamma: Float[Array, " n"]) -> ShapeTables:
    r"""Return `cache` (= `shape_tables(gamma0, order)`, computed once for roots equal to
    `gamma` in value) with the derivatives of `shape_tables(gamma, order)`.

    The primal costs nothing; the tables are only re-evaluated (as a JVP) when `gamma`
    is being differentiated. `cache` carries no derivative of its own: callers build it
    from stop-gradient roots and pass the differentiable roots as `gamma`.
    """
    return cache


@cached_shape_tables.defjvp
def _cached_shape_tables_jvp(order, primals, tangents):
    cache, gamma = primals
    _, dgamma = tangents
    _, dtab = jax.jvp(functools.partial(_shape_tables, order), (gamma,), (dgamma,))
    return cache, dtab


def axial_modes(n: int, s: Float[ArrayLike, " m"], deriv: int = 0) -> Float[Array, "m n"]:
    r"""Axial modes $\sqrt2\sin((2i - 1)\pi s/2)$ of a fixed-free rod (seed eq. 39), or their
    `deriv`-th $s$-derivative (0 or 1); normalized like `transverse_modes`."""
    if deriv not in (0, 1):
        raise ValueError(f"axial_modes: `deriv` must be 0 or 1, got {deriv!r}.")
    s = jnp.atleast_1d(jnp.asarray(s, float))
    w = (2 * jnp.arange(1, n + 1) - 1) * jnp.pi / 2
    arg = s[:, None] * w[None, :]
    return math.sqrt(2.0) * (jnp.sin(arg) if deriv == 0 else w[None, :] * jnp.cos(arg))


def quadrature_order(nmodes: int) -> int:
    """Gauss points on [0, 1] for products of two modes (highest wavenumber ~ 2 (n + 1/2) pi)."""
    return 24 + 8 * nmodes


def gauss_legendre(order: int) -> tuple[Float[Array, " m"], Float[Array, " m"]]:
    """Gauss-Legendre nodes and weights on [0, 1] (static `order`)."""
    x, w = np.polynomial.legendre.leggauss(order)
    return jnp.asarray(0.5 * (x + 1)), jnp.asarray(0.5 * w)


@functools.cache
def _integration_matrix_np(order: int) -> np.ndarray:
    t, w = np.polynomial.legendre.leggauss(order)
    L = np.polynomial.legendre
    A = np.zeros((order, order))
    for j in range(order):
        e = np.eye(order + 1)[j]
        cj = (2 * j + 1) / 2 * w * L.legval(t, e)  # c_j = sum_h cj[h] f_h (exact for deg f < order)
        if j == 0:
            Ij = t + 1
        else:
            Ij = (L.legval(t, np.eye(order + 2)[j + 1]) - L.legval(t, np.eye(order + 2)[j - 1])) / (2 * j + 1)
        A += np.outer(Ij, cj)
    return 0.5 * A  # map [-1, 1] to [0, 1]


def integration_matrix(order: int) -> Float[Array, "m m"]:
    r"""Cumulative Gauss-Legendre integration on [0, 1]: $\int_0^{s_g} f\,ds \approx \sum_h A_{gh} f(s_h)$.

    Integrates the degree `order - 1` Legendre interpolant of $f$ through the Gauss
    nodes (spectrally accurate for smooth $f$; exact for polynomials of degree < `order`).
    Used for $S(x_g) = \int_0^{x_g}\Phi_2'^T\Phi_2'$ at the nodes without nested quadrature.
    """
    return jnp.asarray(_integration_matrix_np(order))
