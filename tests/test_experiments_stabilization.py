"""Quick runs of the seed-003 experiments through the registry; summary contracts."""

import json

import pytest

from flexjax.experiments import run_experiment


@pytest.fixture(scope="module")
def robot_summary(tmp_path_factory):
    out, summary = run_experiment("mobile_robot", tmp_path_factory.mktemp("out"), quick=True)
    assert json.loads((out / "summary.json").read_text()) == summary
    for fig in ("fig3_x", "fig4_x_error", "fig5_y", "fig6_y_error", "fig7_path"):
        assert (out / f"{fig}.png").stat().st_size > 1000
    return summary


def test_mobile_robot_summary(robot_summary):
    s = robot_summary
    for key in (
        "h",
        "alpha_stable",
        "beta_stable",
        "alpha_unstable",
        "beta_unstable",
        "constraint_error_max_uncorrected",
        "constraint_error_max_stable",
        "constraint_error_max_unstable",
        "path_error_max_stable",
    ):
        assert key in s
    assert s["h"] == 0.1
    assert s["amplification_stable"] < 1.0 < s["amplification_unstable"]
    assert s["constraint_error_max_stable"] < s["constraint_error_max_uncorrected"] / 10
    assert s["path_error_max_stable"] == pytest.approx(s["constraint_error_max_stable"])


@pytest.mark.slow  # about 90 s, mostly compiling the tuning objective and its gradient
def test_baumgarte_tune_improves_drift(tmp_path):
    _, s = run_experiment("baumgarte_tune", tmp_path, quick=True)
    assert s["grad_fd_rel_err"] < 1e-5
    assert s["drift_tuned"] <= s["drift_initial"]
    assert s["amplification_tuned"] <= 1.0
