"""The `flexjax` command line and the registered experiments (quick mode)."""

import json

import pytest

from flexjax.cli import main
from flexjax.experiments import DEFAULT, EXPERIMENTS


def _run(name, tmp_path):
    assert main(["run", name, "--quick", "--out", tmp_path]) == 0
    out = tmp_path / name
    return out, json.loads((out / "summary.json").read_text())


def test_list_names_every_experiment(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "pendulum" in out and "slider_crank" in out
    for exp in EXPERIMENTS.values():
        assert exp.description in out
    assert DEFAULT in EXPERIMENTS


def test_run_pendulum_quick(tmp_path, capsys):
    out, s = _run("pendulum", tmp_path)
    assert abs(s["period"] - s["period_exact"]) / s["period_exact"] < 1e-3
    assert abs(s["period"] - s["period_amplitude_corrected"]) / s["period_amplitude_corrected"] < 1e-4
    assert s["period_rel_error_amplitude_corrected"] < 1e-4
    assert s["constraint_residual_max"] < 1e-10
    assert s["energy_drift_rel"] < 1e-6
    for key in ("mass", "length", "g", "dt", "t_end", "rho_inf"):
        assert key in s
    assert all(isinstance(v, (int, float)) for v in s.values())
    assert sorted(p.name for p in out.glob("*.png")) == ["angle.png", "diagnostics.png"]
    assert (out / "trajectory.npz").is_file()
    printed = capsys.readouterr().out
    assert str(out) in printed and '"period"' in printed


def test_run_slider_crank_quick(tmp_path):
    out, s = _run("slider_crank", tmp_path)
    assert s["slider_position_error_max"] < 1e-8
    assert s["constraint_residual_max"] < 1e-10
    assert s["steps_per_second"] > 0
    assert s["driver_torque_min"] < s["driver_torque_max"]
    assert {"slider_position.png", "slider_error.png", "diagnostics.png"} <= {p.name for p in out.glob("*.png")}
    assert (out / "trajectory.npz").is_file()


def test_unknown_experiment_exits_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "no_such_model", "--out", tmp_path])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no_such_model" in err
    for name in EXPERIMENTS:
        assert name in err
    assert not (tmp_path / "no_such_model").exists()
