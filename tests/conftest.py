import gc

import jax
import pytest

from . import _typechecker  # noqa: F401  (loaded before flexjax: its runtime type checker)

# isort: split
import flexjax  # noqa: F401  (enables float64)

jax.config.update("jax_numpy_rank_promotion", "raise")


def pytest_collection_modifyitems(config, items):
    # keep compile-heavy modules grouped so module-scoped fixtures are reused
    items.sort(key=lambda item: item.fspath.basename)


# Full collections walk every live object, millions by the end of a worker's run
# (compiled programs, JAX's caches): within a test module only the young generations
# are collected, and after each module (and its fixtures) is done its cyclic garbage is
# collected once and what lives on is moved out of the collector's reach (gc.freeze).
gc.set_threshold(700, 10, 1_000_000)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if nextitem is None or nextitem.path != item.path:
        gc.collect()
        gc.freeze()


@pytest.fixture
def user_facing_checks():
    """For tests of the library's own argument checks: arguments of the wrong type are
    refused by the runtime type checker before the library sees them, so it is switched
    off here, as it is for users (the checks under test give the plain-words errors)."""
    import jaxtyping

    jaxtyping.config.update("jaxtyping_disable", True)
    yield
    jaxtyping.config.update("jaxtyping_disable", False)
