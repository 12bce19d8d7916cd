"""Shared jaxtyping aliases."""

from jaxtyping import Array, ArrayLike, Float

Scalar = Float[Array, ""]
ScalarLike = float | Float[ArrayLike, ""]
Vector = Float[Array, " n"]
Matrix = Float[Array, "m n"]
