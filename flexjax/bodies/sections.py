r"""Cross sections of the spatial ANCF beam (`AncfBeam3D`): area, second moments,
torsion constant, shear factor and a quadrature rule over the section."""

import abc

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_positive, check_shape
from .._custom_types import Scalar, ScalarLike
from ._ancf_core import gauss

_ODD = np.arange(1, 40, 2, dtype=float)  # odd terms of the rectangle's torsion series


class AbstractSection(eqx.Module):
    """A cross section symmetric about the beam axis (its centroid), in the (y, z) plane."""

    @abc.abstractmethod
    def area(self) -> Scalar:
        """Area $A$ (m²)."""

    @abc.abstractmethod
    def second_moments(self) -> Float[Array, " 2"]:
        r"""$(I_y, I_z) = (\int z^2 dA, \int y^2 dA)$ (m⁴): bending about y and about z."""

    @abc.abstractmethod
    def quadrature(self, order: int) -> tuple[Float[Array, "g 2"], Float[Array, " g"]]:
        """Points `(y, z)` (m) and weights (m², summing to the area) of a rule that is
        exact for polynomials of degree `2 order - 2` in (y, z)."""

    @abc.abstractmethod
    def torsion_constant(self) -> Scalar:
        r"""St-Venant torsion constant $J$ (m⁴), torsional stiffness $GJ$. A section
        without a closed form states its choice (e.g. Bredt's formula for a closed thin
        wall, $\sum b t^3/3$ for an open one); $J = I_y + I_z$ neglects warping and is
        an upper bound."""

    @abc.abstractmethod
    def shear_factor(self, nu: ScalarLike) -> Scalar:
        r"""Timoshenko shear correction factor $k_s(\nu)$ of the transverse shear
        (Cowper 1966)."""


class RectangularSection(AbstractSection):
    r"""Rectangle $|y| \le b/2$, $|z| \le h/2$; Gauss-Legendre `order` x `order`."""

    width: Float[Array, ""]
    height: Float[Array, ""]

    def __init__(self, width, height):
        """**Arguments:** `width` $b$ along y and `height` $h$ along z (m, > 0; leaves)."""
        self.width, self.height = jnp.asarray(width, float), jnp.asarray(height, float)
        for name in ("width", "height"):
            check_shape("RectangularSection", name, getattr(self, name), ())
            check_positive("RectangularSection", name, getattr(self, name))

    def area(self):
        return self.width * self.height

    def second_moments(self):
        b, h = self.width, self.height
        return jnp.stack([b * h**3 / 12, h * b**3 / 12])

    def quadrature(self, order):
        x, w = gauss(order)  # on [0, 1]
        u = np.stack(np.meshgrid(x - 0.5, x - 0.5, indexing="ij"), -1).reshape(-1, 2)
        wu = np.outer(w, w).reshape(-1)
        pts = jnp.asarray(u) * jnp.stack([self.width, self.height])[None, :]
        return pts, jnp.asarray(wu) * self.area()

    def torsion_constant(self):
        r"""Series solution of the Prandtl stress function (Timoshenko & Goodier 1970,
        §109), $a \ge c$ the longer and shorter side:
        $J = a c^3\left[\tfrac13 - \tfrac{64}{\pi^5}\tfrac{c}{a}\sum_{n\,odd}
        \tfrac{1}{n^5}\tanh\tfrac{n\pi a}{2c}\right]$ (20 terms: relative error < 1e-7);
        $0.1406\,a^4$ for a square."""
        a, c = jnp.maximum(self.width, self.height), jnp.minimum(self.width, self.height)
        n = jnp.asarray(_ODD)
        series = jnp.sum(jnp.tanh(n * jnp.pi * a / (2 * c)) / n**5)
        return a * c**3 * (1 / 3 - 64 / jnp.pi**5 * (c / a) * series)

    def shear_factor(self, nu):
        r"""$k_s = 10(1 + \nu)/(12 + 11\nu)$ (Cowper 1966, rectangle)."""
        return 10 * (1 + nu) / (12 + 11 * nu)


class CircularSection(AbstractSection):
    r"""Disc of radius $R$; `order` Gauss points in $r$ (weight $r\,dr$) times `2 order`
    equally spaced angles (exact for degree `2 order - 2`)."""

    radius: Float[Array, ""]

    def __init__(self, radius):
        """**Arguments:** `radius` $R$ (m, > 0; a leaf)."""
        self.radius = jnp.asarray(radius, float)
        check_shape("CircularSection", "radius", self.radius, ())
        check_positive("CircularSection", "radius", self.radius)

    def area(self):
        return jnp.pi * self.radius**2

    def second_moments(self):
        i = jnp.pi * self.radius**4 / 4
        return jnp.stack([i, i])

    def quadrature(self, order):
        x, w = gauss(order)  # r/R on [0, 1]; the polar Jacobian r is put in the weight
        phi = 2 * np.pi * np.arange(2 * order) / (2 * order)
        u = (x[:, None, None] * np.stack([np.cos(phi), np.sin(phi)], -1)[None]).reshape(-1, 2)
        wu = np.repeat(2 * w * x / (2 * order), 2 * order)  # sums to 1
        return jnp.asarray(u) * self.radius, jnp.asarray(wu) * self.area()

    def torsion_constant(self):
        r"""$J = \pi R^4/2$, the polar moment: a disc does not warp."""
        return jnp.pi * self.radius**4 / 2

    def shear_factor(self, nu):
        r"""$k_s = 6(1 + \nu)/(7 + 6\nu)$ (Cowper 1966, solid circle)."""
        return 6 * (1 + nu) / (7 + 6 * nu)
