"""Shared jaxtyping aliases."""

from jaxtyping import ArrayLike, Real

# a time, load factor or other scalar argument: a Python number or a 0-d array
Scalar = Real[ArrayLike, ""]
ScalarLike = Scalar
