"""The runtime type checker of the tests (`--jaxtyping-packages` in pyproject.toml):
beartype with PEP 484's numeric tower, so that an `int` passes where `float` is
annotated, as Python's typing rules say."""

from beartype import BeartypeConf, beartype

checker = beartype(conf=BeartypeConf(is_pep484_tower=True))
