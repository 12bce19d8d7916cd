"""The default experiment (`flexjax run`): the FLFJ arm with and without a ZVD shaper."""

import json

import numpy as np
import pytest

from flexjax.analysis import flfj_frequencies
from flexjax.cli import main
from flexjax.experiments import DEFAULT, EXPERIMENTS
from flexjax.models.flfj_arm import EI, LENGTH, RHO_A


def test_the_default_experiment_is_the_flexible_showcase():
    assert DEFAULT == "showcase" and "showcase" in EXPERIMENTS


@pytest.mark.slow
def test_showcase_quick_run_writes_its_animation_and_cancels_the_vibration(tmp_path):
    assert main(["run", "--quick", "--out", tmp_path]) == 0
    out = tmp_path / "showcase"
    s = json.loads((out / "summary.json").read_text())
    np.testing.assert_allclose(
        [s[f"f{i}"] for i in range(1, 5)], flfj_frequencies(EI, RHO_A, LENGTH, 0.1, 4), rtol=1e-9
    )
    assert s["residual_tip_vibration_unshaped"] > 0.1  # m: the soft joint rocks the link
    assert s["vibration_reduction"] > 50
    assert (out / "arm.gif").read_bytes()[:4] == b"GIF8"
    assert {"response.png", "trajectory.npz"} <= {p.name for p in out.iterdir()}
