import jax
import pytest

from . import _typechecker  # noqa: F401  (loaded before flexjax: its runtime type checker)

# isort: split
import flexjax  # noqa: F401  (enables float64)

jax.config.update("jax_numpy_rank_promotion", "raise")


def pytest_collection_modifyitems(config, items):
    # keep compile-heavy modules grouped so module-scoped fixtures are reused
    items.sort(key=lambda item: item.fspath.basename)


@pytest.fixture
def user_facing_checks():
    """For tests of the library's own argument checks: arguments of the wrong type are
    refused by the runtime type checker before the library sees them, so it is switched
    off here, as it is for users (the checks under test give the plain-words errors)."""
    import jaxtyping

    jaxtyping.config.update("jaxtyping_disable", True)
    yield
    jaxtyping.config.update("jaxtyping_disable", False)
