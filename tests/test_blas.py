"""flexjax keeps scipy's OpenBLAS (under XLA's CPU LAPACK kernels) single-threaded
unless the user chose a thread count, also when the library was loaded before
flexjax. Each case runs in a fresh interpreter: the setting is process-wide."""

import os
import subprocess
import sys

import pytest

SCRIPT = """
import ctypes, jax.numpy as jnp, scipy.linalg
from flexjax._blas import _loaded_scipy_openblas
if {load_first}:
    jnp.linalg.inv(jnp.eye(3) + 1.0).block_until_ready()  # loads scipy's OpenBLAS
import flexjax
jnp.linalg.inv(jnp.eye(3) + 1.0).block_until_ready()
libs = _loaded_scipy_openblas()
assert libs, "scipy's OpenBLAS is not loaded"
print(ctypes.CDLL(libs[0]).scipy_openblas_get_num_threads())
"""


def threads(load_first: bool, env_threads: str | None) -> int:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")
    }
    if env_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = env_threads
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(load_first=load_first)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2,
    reason="reads /proc/self/maps; needs 2 cores for a multi-threaded default",
)
def test_blas_is_single_threaded_unless_the_user_chose():
    assert threads(load_first=False, env_threads=None) == 1  # set before the library loads
    assert threads(load_first=True, env_threads=None) == 1  # loaded first: set through its function
    assert threads(load_first=True, env_threads="2") == 2  # the user's choice stays
