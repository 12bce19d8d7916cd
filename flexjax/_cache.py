"""JAX's persistent compilation cache, on by default for flexjax.

Compiling a model's programs takes seconds; the executables are written to a cache
folder keyed by JAX on the whole program, the compiler options, the backend and the
JAX version, so a new process running the same model loads them instead of compiling
again. Different models, shapes or settings are different programs and never share an
entry. The folder is `$FLEXJAX_CACHE_DIR` if set, else `$XDG_CACHE_HOME/flexjax/jax`
(`~/.cache/flexjax/jax`). Set `FLEXJAX_NO_CACHE=1` to leave JAX's cache off; a cache
folder the user configured for JAX (`JAX_COMPILATION_CACHE_DIR` or
`jax.config.update("jax_compilation_cache_dir", ...)`) is left as it is. Deleting the
folder clears the cache.
"""

import os
import pathlib

import jax

# every program is kept, also the small ones of eager operations, which a new process
# would otherwise compile again by the dozen (docs/compile.md)
MIN_COMPILE_TIME_S = 0.0


def default_cache_dir() -> pathlib.Path:
    """The folder flexjax uses for JAX's persistent compilation cache."""
    if os.environ.get("FLEXJAX_CACHE_DIR"):
        return pathlib.Path(os.environ["FLEXJAX_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "flexjax" / "jax"


def enable_persistent_cache() -> pathlib.Path | None:
    """Point JAX's persistent compilation cache at `default_cache_dir()` unless it is
    switched off (`FLEXJAX_NO_CACHE`) or the user configured JAX's cache folder.
    Returns the folder in use, or `None` when the cache stays off."""
    if os.environ.get("FLEXJAX_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no"):
        return None
    configured = jax.config.jax_compilation_cache_dir
    if configured:
        return pathlib.Path(configured)
    path = default_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile as before
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    if jax.config.jax_persistent_cache_min_compile_time_secs == 1.0:  # JAX's default, not the user's
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_S)
    from jax.experimental.compilation_cache import compilation_cache

    compilation_cache.reset_cache()  # re-read the settings if JAX has compiled already
    return path
