import jax

import flexjax  # noqa: F401  (enables float64)

jax.config.update("jax_numpy_rank_promotion", "raise")


def pytest_collection_modifyitems(config, items):
    # keep compile-heavy modules grouped so module-scoped fixtures are reused
    items.sort(key=lambda item: item.fspath.basename)
