r"""Modes of the elastically constrained beam of the FLFJ arm (seed 000, section 2.1, 3.3).

A uniform Euler-Bernoulli beam of length $l$ is pinned at $x = 0$ with a rotational
spring $k$ (the flexible joint, $EI\,w''(0) = k\,w'(0)$, $w(0) = 0$) and free at
$x = l$. With $\gamma = \beta l$ and $\kappa = k l / EI = k / n$ ($n = EI/l$) the
frequency equation (seed eq. 32, 53) is

$$\cos\gamma \sinh\gamma - \cosh\gamma \sin\gamma = -\frac{\kappa}{\gamma}(\cos\gamma\cosh\gamma + 1),$$

and $f_i = \gamma_i^2 / (2\pi l^2)\,\sqrt{EI/\rho A}$ (eq. 34). $\kappa = 0$ is the
pinned-free beam, $\kappa \to \infty$ the cantilever ($\cos\gamma\cosh\gamma + 1 = 0$).

**Root counting.** For $\kappa > 0$ the $i$-th root lies between the $(i-1)$-th root
of the pinned-free beam and the $i$-th root of the cantilever, and tends to 0 as
$\kappa \to 0$ ($\gamma_1 \approx (3\kappa)^{1/4}$: the beam rocking rigidly on the
spring). For continuity in $k$ the rigid-body mode at $\gamma = 0$ is **counted** as
mode 1 when $\kappa = 0$: then `flfj_roots(0, n)` is `[0, 3.9266, 7.0686, ...]`.

**Root finding** is bracketing, not a guess near the answer: the well-scaled form

$$F(\gamma) = \frac{\gamma\,(\cos\gamma\tanh\gamma - \sin\gamma)
+ \kappa\,(\cos\gamma + \operatorname{sech}\gamma)}{\gamma + \kappa}$$

(eq. 32 times $\gamma/((\gamma + \kappa)\cosh\gamma)$: bounded, no overflow, equal to the
pinned-free form at $\kappa = 0$ and the cantilever form at $\kappa = \infty$) is
sampled on a fine grid, sign changes bracket the roots (consecutive roots are more
than 2 apart, the grid step is 0.02), bisection shrinks each bracket, and two Newton
steps polish. Derivatives of the roots with respect to $k$, $EI$, $l$ come from the
implicit function theorem, $d\gamma = -F_\kappa / F_\gamma\, d\kappa$.

**Mode shapes** (seed eq. 35-36 rewritten). Eq. 36 divides by
$\cos\gamma\sinh\gamma - \cosh\gamma\sin\gamma$, which vanishes at $\kappa = 0$, and
$\cosh\beta x - \zeta\sinh\beta x$ cancels catastrophically for higher modes. flexjax
uses the equivalent form built from the free end, $u = \gamma(1 - s)$, $s = x/l$:
$\tilde\phi = a(\cos u + \cosh u) + b(\sin u + \sinh u)$ (free-end conditions hold
for any $a, b$) with $\tilde\phi(0) = 0$, i.e. $a = \sin\gamma\operatorname{sech}\gamma
+ \tanh\gamma$, $b = -(\cos\gamma\operatorname{sech}\gamma + 1)$, evaluated with
$e^{u - \gamma}$ and $e^{-u}$ only. At a root the spring condition holds too, so this
is eq. 35 up to a factor. **Normalization:** $\frac1l \int_0^l \phi_i^2\,dx = 1$ and
$\phi_i(l) > 0$ (dimensionless shapes; the modal mass of a uniform beam is then
$\rho A l$, the beam mass). The rigid mode ($\kappa = 0$) is $\sqrt3\, x/l$.
Axial modes (eq. 39): $\sqrt2 \sin((2i-1)\pi x / 2l)$, same normalization.
"""

import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .._custom_types import Scalar

# the frequency equation, its roots and the mode shapes live with the modal beam bodies
# (`flexjax.bodies._beam_modes`), which use them; this module re-exports them
from ..bodies._beam_modes import (
    GRID_STEP as GRID_STEP,
    ModeCoefficients as ModeCoefficients,
    ShapeTables as ShapeTables,
    axial_modes as axial_modes,
    bracket_roots as bracket_roots,
    cached_shape_tables as cached_shape_tables,
    eval_modes as eval_modes,
    exp_parts as _exp_parts,
    frequency_function as frequency_function,
    gauss_legendre as gauss_legendre,
    integration_matrix as integration_matrix,
    mode_coefficients as mode_coefficients,
    refine_roots as refine_roots,
    shape_tables as shape_tables,
)


def flfj_roots(kappa: Float[ArrayLike, ""], n: int) -> Float[Array, " n"]:
    r"""First `n` roots $\gamma_i = \beta_i l$ of the frequency equation (seed eq. 32 / 53).

    **Arguments:**

    - `kappa`: $k l / EI = k / n$, $\ge 0$; `jnp.inf` gives the cantilever roots.
      Differentiable (implicit function theorem); may be traced (jit, vmap, grad).
    - `n`: number of roots (static int, $\ge 1$).

    **Returns:** increasing roots; for $\kappa = 0$ the first one is the rigid mode 0.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"flfj_roots: `n` must be a positive int, got {n!r}.")
    return _flfj_roots(kappa, n)


@functools.partial(jax.jit, static_argnums=1)
def _flfj_roots(kappa, n):
    return refine_roots(bracket_roots(kappa, n), kappa)[0]


def cantilever_roots(n: int) -> Float[Array, " n"]:
    r"""First `n` roots of $\cos\gamma\cosh\gamma + 1 = 0$ (seed eq. 51-52); $\gamma_1 = 1.87510407$."""
    return flfj_roots(jnp.inf, n)


def frequencies_hz(
    gamma: Float[ArrayLike, " n"], ei: Float[ArrayLike, ""], rho_a: Float[ArrayLike, ""], length: Float[ArrayLike, ""]
) -> Float[Array, " n"]:
    r"""Natural frequencies $f_i = \gamma_i^2/(2\pi l^2)\sqrt{EI/\rho A}$ in Hz (seed eq. 34)."""
    return jnp.asarray(gamma) ** 2 / (2 * jnp.pi * jnp.asarray(length) ** 2) * jnp.sqrt(jnp.asarray(ei) / rho_a)


def flfj_frequencies(ei, rho_a, length, k, n: int) -> Float[Array, " n"]:
    r"""First `n` natural frequencies (Hz) of the elastically constrained beam.

    **Arguments:** `ei` (N m²), `rho_a` (kg/m), `length` (m), `k` root spring (N m/rad,
    $\ge 0$, `inf` for a cantilever), `n` (static). Differentiable in all four numbers
    (not at `k = inf`: use `cantilever_roots` there). For `k = 0` the first frequency is
    the rigid mode's 0.
    """
    return frequencies_hz(flfj_roots(k * length / ei, n), ei, rho_a, length)


def transverse_modes(gamma: Float[ArrayLike, " n"], s: Float[ArrayLike, " m"], deriv: int = 0) -> Float[Array, "m n"]:
    r"""Normalized transverse mode shapes $\phi_i(s)$, $s = x/l \in [0, 1]$, or their
    `deriv`-th derivative with respect to $s$ (0, 1 or 2; divide by $l^{\text{deriv}}$ for
    $x$-derivatives).

    `gamma` are roots from `flfj_roots` (any $\kappa$): the shape uses only $\phi(0) = 0$
    and the free-end conditions, so it is exact for every root (module docstring).
    Normalization $\int_0^1 \phi_i^2\,ds = 1$, $\phi_i(1) > 0$, computed by Gauss-Legendre
    quadrature; $\gamma = 0$ gives the rigid mode $\sqrt3\,s$.
    """
    if deriv not in (0, 1, 2):
        raise ValueError(f"transverse_modes: `deriv` must be 0, 1 or 2, got {deriv!r}.")
    return _transverse_modes(gamma, s, deriv)


@functools.partial(jax.jit, static_argnums=2)
def _transverse_modes(gamma, s, deriv):
    return eval_modes(mode_coefficients(gamma), s, deriv)


# -- critical joint stiffness (seed section 3.3) -------------------------------------


def kappa_from_root(gamma: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
    r"""The $\kappa = k/n$ for which `gamma` is a root of seed eq. 53:
    $\kappa = \gamma(\sin\gamma - \cos\gamma\tanh\gamma)/(\cos\gamma + \operatorname{sech}\gamma)$."""
    gamma = jnp.asarray(gamma, float)
    tanh, sech = _exp_parts(gamma)
    return gamma * (jnp.sin(gamma) - jnp.cos(gamma) * tanh) / (jnp.cos(gamma) + sech)


def critical_stiffness_coefficient(r_c: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
    r"""$P(r_c)$ with $k_c = P\,n$, $n = EI/l$ (seed eq. 50-55).

    The first frequency ratio is $r = f_{FLFJ}/f_{cant} = \gamma_2^2/\gamma_1^2$
    (eq. 54; $\gamma_1 = 1.87510407$ the cantilever root, $\gamma_2$ the first root of
    eq. 53). Setting $r = r_c$ gives $\gamma_2 = \gamma_1\sqrt{r_c}$, and eq. 53 solved
    for $k/n$ at that $\gamma_2$ is $P$ in closed form (`kappa_from_root`). $k$ and $n$
    enter eq. 53 only as $k/n$, which is why $k_c$ is exactly linear in $n$ (the paper's
    Fig. 9). Valid for $0 < r_c < 1$; differentiable.
    """
    gamma1 = cantilever_roots(1)[0]
    return kappa_from_root(gamma1 * jnp.sqrt(jnp.asarray(r_c, float)))


def critical_stiffness(r_c, ei, length) -> Scalar:
    r"""Critical joint stiffness $k_c = P(r_c)\,EI/l$ (N m/rad, seed eq. 55)."""
    return critical_stiffness_coefficient(r_c) * jnp.asarray(ei) / length


def frequency_ratio(k: Float[ArrayLike, ""], n: Float[ArrayLike, ""]) -> Scalar:
    r"""First-frequency ratio $r(n, k) = \gamma_2^2/\gamma_1^2$ of the FLFJ beam to the
    cantilever (seed eq. 54), with $n = EI/l$ (N m) and joint stiffness $k$ (N m/rad)."""
    return (flfj_roots(jnp.asarray(k, float) / n, 1)[0] / cantilever_roots(1)[0]) ** 2
