r"""Pictures of the stability region: the admissible $(\alpha, \beta)$ pairs at a step and the
region $|R(z)| \le 1$ in the complex plane, as PNG files."""

import pathlib

import numpy as np

from ... import plotting
from ._polynomial import polyval, trimmed_coefficients
from .drift import drift_roots, is_admissible
from .recommendation import recommend
from .region import leftmost_point, region_boundary, region_grid, region_radius
from .tableaus import ExplicitRungeKutta


def _pair_markers(ax, method, h, pairs, to_xy):
    """Mark labelled pairs: filled circle when admissible, cross when not."""
    for k, (label, (alpha, beta)) in enumerate((pairs or {}).items()):
        ok = bool(is_admissible(method, alpha, beta, h))
        for x, y in to_xy(alpha, beta):
            ax.plot(x, y, "o" if ok else "x", color="tab:green" if ok else "tab:red", ms=7, mew=2)
        # labels alternate above and below their marker so neighbours on one line stay readable
        ax.annotate(
            label, to_xy(alpha, beta)[0], xytext=(4, 5 if k % 2 == 0 else -12), textcoords="offset points", fontsize=8
        )


def plot_region(
    method: ExplicitRungeKutta,
    h: float,
    path,
    *,
    margin: float = 0.2,
    pairs: dict[str, tuple[float, float]] | None = None,
    alpha_max: float | None = None,
    beta_max: float | None = None,
    n: int = 401,
    title: str = "",
):
    r"""PNG of the admissible $(\alpha, \beta)$ region of `method` at step `h`.

    Shades the admissible pairs and, darker, those admissible with the `margin` of
    `recommend`; draws the bisected boundary, the critical-damping line $\alpha = \beta$,
    the recommended pair (star) and any `pairs` (label -> (alpha, beta); circle if
    admissible, cross if not). Default limits: 1.15 times the extent of the region.

    **Returns:** the path.
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = recommend(method, h, margin)
    a_extent = -leftmost_point(method).real / h
    alphas = np.linspace(0.0, a_extent, 400)
    bnd = region_boundary(method, h, alphas)
    alpha_max = 1.15 * a_extent if alpha_max is None else alpha_max
    beta_max = 1.15 * np.nanmax(bnd.beta_upper) if beta_max is None else beta_max
    grid = region_grid(method, h, alpha_max, beta_max, n)
    inner = is_admissible(method, grid.alpha[:, None], grid.beta[None, :], h / (1 - margin))
    level = np.asarray(grid.admissible, float) + np.asarray(inner, float)

    fig, ax = plotting.subplots(figsize=(9, 5))
    ax.contourf(grid.alpha, grid.beta, level.T, levels=[0.5, 1.5, 2.5], colors=["#c6dbef", "#6baed6"])
    ax.plot(bnd.alpha, bnd.beta_upper, "k-", lw=1.2, label="boundary")
    ax.plot(bnd.alpha, bnd.beta_lower, "k-", lw=1.2)
    top = min(alpha_max, beta_max)
    ax.plot([0, top], [0, top], "k--", lw=0.8, label=r"critical damping $\alpha = \beta$")
    ax.plot(
        rec.alpha,
        rec.beta,
        "*",
        color="tab:orange",
        ms=14,
        mec="k",
        label=f"recommended ({rec.alpha:.3g}, {rec.beta:.3g}), margin {margin:g}",
    )
    _pair_markers(ax, method, h, pairs, lambda a, b: [(a, b)])
    ax.fill_between([], [], color="#c6dbef", label="admissible")
    ax.fill_between([], [], color="#6baed6", label=f"admissible at h/(1-{margin:g})")
    ax.set_xlim(0, alpha_max)
    ax.set_ylim(0, beta_max)
    ax.set_xlabel(r"$\alpha$ [1/s]")
    ax.set_ylabel(r"$\beta$ [1/s]")
    ax.set_title(title or rf"{method.name}, h = {h:g} s: admissible $(\alpha, \beta)$")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plotting.close(fig)
    return path


def plot_stability_region(
    methods: ExplicitRungeKutta | tuple[ExplicitRungeKutta, ...] | list[ExplicitRungeKutta],
    path,
    *,
    h: float | None = None,
    pairs: dict[str, tuple[float, float]] | None = None,
    title: str = "",
):
    r"""PNG of the stability region $|R(z)| \le 1$ in the complex plane.

    The first method is filled, every method gets its boundary contour. With `h`, each
    pair in `pairs` (label -> (alpha, beta)) is marked at its drift roots $h\lambda_\pm$
    (circle if admissible for the first method, cross if not).

    **Returns:** the path.
    """
    methods = (methods,) if isinstance(methods, ExplicitRungeKutta) else tuple(methods)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # extent: the bounding box of all regions, from a grid over the radius bound
    r = 1.01 * max(region_radius(m) for m in methods)
    xs, ys = np.linspace(-r, r, 801), np.linspace(-r, r, 801)
    Z = xs[None, :] + 1j * ys[:, None]
    mods = [np.abs(polyval(trimmed_coefficients(m), Z)) for m in methods]
    inside = np.any([m <= 1 for m in mods], axis=0)
    pad = 0.1 * r
    x0, x1 = xs[inside.any(axis=0)].min() - pad, xs[inside.any(axis=0)].max() + pad
    y1 = ys[inside.any(axis=1)].max() + pad
    if pairs and h is not None:
        for alpha, beta in pairs.values():
            for lam in drift_roots(alpha, beta):
                z = complex(h * lam)
                x0, x1, y1 = min(x0, z.real - pad), max(x1, z.real + pad), max(y1, abs(z.imag) + pad)

    fig, ax = plotting.subplots(figsize=(6.5, 5.5))
    xs, ys = np.linspace(x0, x1, 801), np.linspace(-y1, y1, 801)
    Z = xs[None, :] + 1j * ys[:, None]
    import matplotlib

    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, m in enumerate(methods):
        mod = np.abs(polyval(trimmed_coefficients(m), Z))
        if k == 0:
            ax.contourf(xs, ys, mod, levels=[0, 1], colors=["#c6dbef"])
        ax.contour(xs, ys, mod, levels=[1], colors=[colors[k % len(colors)]], linewidths=1.5)
        ax.plot([], [], color=colors[k % len(colors)], label=m.name)
    ax.axhline(0, color="k", lw=0.6)
    ax.axvline(0, color="k", lw=0.6)
    if h is not None:
        to_xy = lambda a, b: [(complex(h * lam).real, complex(h * lam).imag) for lam in drift_roots(a, b)]
        _pair_markers(ax, methods[0], h, pairs, to_xy)
    ax.set_aspect("equal")
    ax.set_xlim(x0, x1)
    ax.set_ylim(-y1, y1)
    ax.set_xlabel(r"Re $z$")
    ax.set_ylabel(r"Im $z$")
    ax.set_title(title or r"stability region $|R(z)| \leq 1$" + (rf", marks: $h\lambda_\pm$, h = {h:g} s" if h else ""))
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plotting.close(fig)
    return path
