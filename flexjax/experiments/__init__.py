r"""Registered experiments for the `flexjax` command line.

Each experiment lives in its own module and exposes `NAME`, `DESCRIPTION` and
`run(out_dir, quick, progress) -> dict`: it simulates a model, writes its plots and
trajectory data into `out_dir` and returns a flat summary (snake_case key -> number,
SI units). `run_experiment` adds the shared part: the output folder and `summary.json`.
"""

import dataclasses
import json
import math
import os
import pathlib
import re
from collections.abc import Callable

from . import (
    ancf3d_cantilever,
    ancf3d_validation,
    baumgarte_region,
    baumgarte_tune,
    clearance_arm,
    clearance_interval,
    elastica,
    flexible_pendulum,
    flfj_control,
    flfj_modes,
    flfj_stiffness,
    flfj_tune,
    impact_stick_slip,
    mobile_robot,
    parallel_robot,
    pendulum,
    showcase,
    slider_crank,
    spinup,
)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One runnable experiment.

    **Arguments:**

    - `name`: registry key and output subfolder name.
    - `description`: one line, shown by `flexjax list`.
    - `run`: `run(out_dir: pathlib.Path, quick: bool, progress: bool) -> dict[str, float]`.
    """

    name: str
    description: str
    run: Callable[[pathlib.Path, bool, bool], dict]


EXPERIMENTS: dict[str, Experiment] = {
    m.NAME: Experiment(m.NAME, m.DESCRIPTION, m.run)
    for m in (
        showcase,
        pendulum,
        slider_crank,
        mobile_robot,
        baumgarte_region,
        baumgarte_tune,
        flfj_modes,
        flfj_stiffness,
        elastica,
        flexible_pendulum,
        flfj_control,
        flfj_tune,
        spinup,
        clearance_arm,
        clearance_interval,
        ancf3d_cantilever,
        impact_stick_slip,
        parallel_robot,
        ancf3d_validation,
    )
}
DEFAULT = "showcase"

_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def check_summary(summary: dict) -> dict[str, float]:
    """Check that `summary` is flat (snake_case key -> finite number) and convert the
    values to Python numbers.

    **Returns:** the converted dict. **Raises:** `ValueError` naming the offending key.
    """
    out = {}
    for key, value in summary.items():
        if not (isinstance(key, str) and _SNAKE.match(key)):
            raise ValueError(f"summary key {key!r} is not snake_case; use lower-case words joined by '_'.")
        try:
            number = value if isinstance(value, int) and not isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"summary[{key!r}] must be a number, got {type(value).__name__}; store arrays in the .npz file."
            ) from None
        if not math.isfinite(number):
            raise ValueError(f"summary[{key!r}] is {number}; the experiment produced a non-finite result.")
        out[key] = number
    return out


def run_experiment(name: str, out_root, *, quick: bool = False, progress: bool = False):
    """Run the registered experiment `name` into `out_root/name/` and write `summary.json`.

    **Arguments:**

    - `name`: a key of `EXPERIMENTS`.
    - `out_root`: parent output folder (created if missing).
    - `quick`: shorter simulated time, for smoke tests.
    - `progress`: show progress bars while simulating.

    A `summary.json` left by an earlier run is deleted before the run starts.

    **Returns:** `(out_dir, summary)`. **Raises:** `KeyError` for an unknown name.
    """
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; valid names: {', '.join(EXPERIMENTS)}")
    out_dir = pathlib.Path(out_root) / name
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "summary.json"
    # a previous run's summary goes first: a run that fails or is interrupted leaves none,
    # never an old one that looks current
    path.unlink(missing_ok=True)
    summary = check_summary(EXPERIMENTS[name].run(out_dir, quick, progress))
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)  # atomic: never a half-written summary
    return out_dir, summary
