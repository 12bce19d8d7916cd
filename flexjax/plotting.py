"""Matplotlib helpers that write PNG files.

Figures are built with the object-oriented API (`matplotlib.figure.Figure`), never
through `pyplot`'s global state: the library neither selects nor switches the user's
backend (only the `flexjax` command line does), needs no display, and leaves no open
figures behind. Code written against pyplot uses `subplots` and `close` from here in
place of `plt.subplots` and `plt.close`.
"""

import pathlib

import numpy as np


def subplots(nrows: int = 1, ncols: int = 1, **kwargs):
    """`(figure, axes)` like `matplotlib.pyplot.subplots`, but the figure is a bare
    `matplotlib.figure.Figure` (no backend, no pyplot figure manager).

    **Arguments:** `nrows`, `ncols`; `figsize` and `dpi` go to the figure, every other
    keyword (`sharex`, `squeeze`, `subplot_kw`, ...) to `Figure.subplots`.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=kwargs.pop("figsize", None), dpi=kwargs.pop("dpi", None))
    return fig, fig.subplots(nrows, ncols, **kwargs)


def close(fig) -> None:
    """Counterpart of `matplotlib.pyplot.close` for a figure from `subplots`: a bare
    `Figure` holds no backend resources, so there is nothing to release; calling it keeps
    pyplot-style code unchanged.

    **Arguments:** `fig`: the figure (unused).
    """


def plot_series(t, ys, labels, path, *, xlabel="t [s]", ylabel="", title="", logy=False):
    """Plot several series against `t` into one PNG; returns the path."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = subplots(figsize=(7, 4))
    for y, lab in zip(ys, labels, strict=True):
        (ax.semilogy if logy else ax.plot)(t, y, label=lab)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if labels:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def plot_diagnostics(traj, path, *, title=""):
    """Energy change and constraint residuals of a trajectory, in two panels."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.asarray(traj.t)
    fig, (ax1, ax2) = subplots(2, 1, figsize=(7, 6), sharex=True)
    e = np.asarray(traj.energy)
    ax1.plot(t, e - e[0])
    ax1.set_ylabel("E - E(0) [J]")
    ax1.set_title(title)
    ax1.grid(True, alpha=0.3)
    tiny = 1e-20  # floor for exact zeros on the log axis
    ax2.semilogy(t, np.maximum(np.asarray(traj.constraint_residual), tiny), label="max |Phi|")
    ax2.semilogy(t, np.maximum(np.asarray(traj.velocity_residual), tiny), label="max |dPhi/dt|")
    ax2.set_xlabel("t [s]")
    ax2.set_ylabel("residual")
    ax2.legend()
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def finish_axes(fig, ax, path, *, xlabel, ylabel, title=None, grid_which="major", legend=True, legend_size=None):
    """Label, grid, legend, save a single-axes figure as PNG and close it; returns the path."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    ax.grid(True, which=grid_which, alpha=0.3)
    if legend:
        ax.legend(fontsize=legend_size)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path
