"""The library's plots never select or switch the matplotlib backend."""

import matplotlib
import numpy as np

from flexjax import plotting


def test_plots_leave_the_backend_and_pyplot_state_alone(tmp_path):
    before = matplotlib.get_backend()
    t = np.linspace(0.0, 1.0, 5)
    path = plotting.plot_series(t, [t**2], ["t^2"], tmp_path / "series.png", ylabel="y")
    fig, ax = plotting.subplots(figsize=(3, 2))
    ax.plot(t, t, label="t")
    plotting.finish_axes(fig, ax, tmp_path / "axes.png", xlabel="t", ylabel="y")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "axes.png").stat().st_size > 0
    assert matplotlib.get_backend() == before
    import sys

    if "matplotlib.pyplot" in sys.modules:  # nothing was registered with pyplot
        assert sys.modules["matplotlib.pyplot"].get_fignums() == []


def test_library_sources_never_call_matplotlib_use():
    import pathlib

    import flexjax

    root = pathlib.Path(flexjax.__file__).parent
    offenders = [p.name for p in root.rglob("*.py") if p.name != "cli.py" and "matplotlib.use(" in p.read_text()]
    assert offenders == []
