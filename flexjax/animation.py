r"""Animations of a trajectory: every body drawn in the plane or in 3D, written as a GIF
or an MP4 file (`Trajectory.animate`).

Bodies are drawn as what they are: beams (`AncfBeam2D`, `AncfBeam3D`, `ModalHubBeam`)
as their deformed centerlines (a `ModalHubBeam` with a short stroke along its hub axis),
rigid bars as lines between their end points, triangular plates as their outline, point
masses as dots, and any other body as its frame (three
short axes at its origin). Frames are taken at the saved instants nearest to an even
clock of `fps` frames per second of simulated time (times `speed`), so a run saved
densely enough plays in real time. Figures are bare `matplotlib.figure.Figure`s with an
Agg canvas: the user's backend is never touched.
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from .bodies.ancf2d import AncfBeam2D
from .bodies.ancf3d import AncfBeam3D
from .bodies.base import AbstractBody
from .bodies.modal_beam import ModalHubBeam
from .bodies.rigid import PointMass, RigidBar2D, RigidBar3D, TriangularPlate

BEAM_SAMPLES = 12  # centerline points per element (40 along a modal beam)
MARGIN = 0.08  # fraction of the scene size added around it
HUB_ARM = 0.25  # drawn length of a modal beam's hub axis, fraction of the beam length


def _beam_points(body, dim):
    n = body.n_elements if isinstance(body, (AncfBeam2D, AncfBeam3D)) else 40 // BEAM_SAMPLES
    s = jnp.linspace(0.0, body.length, BEAM_SAMPLES * n + 1)
    if dim == 3:
        return jnp.stack([s, jnp.zeros_like(s), jnp.zeros_like(s)], axis=1)
    return s[:, None]


def outline(body: AbstractBody, frame_size: float = 0.1):
    r"""`(fn, style)` for drawing `body`: `fn(q_b)` gives the polyline's points, shape
    `(k, dim)`; `style` is `"beam"`, `"bar"`, `"plate"`, `"point"` or `"frame"`
    (module docstring). `frame_size` (m) is the axis length of a drawn frame."""
    dim = body.dim
    if isinstance(body, ModalHubBeam):
        pts = _beam_points(body, dim)

        def hub_and_beam(q):
            # a short hub arm (HUB_ARM of the length along the hub axis) back to the
            # pivot, then the beam: the angle between them is the joint's twist
            hub = HUB_ARM * body.length * body.axes(q)[:, 0]
            beam = jax.vmap(lambda p: body.position(q, p))(pts)
            return jnp.concatenate([jnp.stack([hub, jnp.zeros_like(hub)]), beam])

        return hub_and_beam, "beam"
    if isinstance(body, (AncfBeam2D, AncfBeam3D)):
        pts = _beam_points(body, dim)
        return (lambda q: jax.vmap(lambda p: body.position(q, p))(pts)), "beam"
    if isinstance(body, RigidBar2D):
        ends = jnp.stack([jnp.zeros(2), jnp.stack([body.length, 0.0])])
        return (lambda q: jax.vmap(lambda p: body.position(q, p))(ends)), "bar"
    if isinstance(body, RigidBar3D):
        ends = jnp.stack([jnp.zeros(1), body.length[None]])
        return (lambda q: jax.vmap(lambda p: body.position(q, p))(ends)), "bar"
    if isinstance(body, TriangularPlate):
        corners = jnp.concatenate([body.vertices, body.vertices[:1]])
        return (lambda q: jax.vmap(lambda p: body.position(q, p))(corners)), "plate"
    if isinstance(body, PointMass):
        return (lambda q: q[None, :]), "point"

    def frame(q):
        size = body.point_size if body.point_size is not None else dim
        origin = body.position(q, jnp.zeros(size, q.dtype))
        axes = frame_size * body.axes(q)
        tips = [origin + axes[:, k] for k in range(dim)]
        return jnp.stack([tips[0], origin, tips[1]] + ([origin, tips[2]] if dim == 3 else []))

    return frame, "frame"


_STYLE = {
    "beam": dict(lw=2.5),
    "bar": dict(lw=4),
    "plate": dict(lw=2),
    "point": dict(marker="o", ms=8, lw=0),
    "frame": dict(lw=1.5),
}


def _frame_indices(t, fps, speed, max_frames):
    finite = np.isfinite(t)
    t = t[finite]
    clock = np.arange(t[0], t[-1] + 1e-12, speed / fps)
    if clock.size > max_frames:
        clock = np.linspace(t[0], t[-1], max_frames)
    idx = np.clip(np.searchsorted(t, clock), 0, t.size - 1)
    prev = np.clip(idx - 1, 0, t.size - 1)
    idx = np.where(np.abs(t[prev] - clock) < np.abs(t[idx] - clock), prev, idx)
    return np.nonzero(finite)[0][idx]


def _writer(path: pathlib.Path, fps: int):
    from matplotlib import animation

    suffix = path.suffix.lower()
    if suffix == ".gif":
        return animation.PillowWriter(fps=fps)
    if suffix == ".mp4":
        if not animation.FFMpegWriter.isAvailable():
            raise RuntimeError("animate: writing an MP4 needs the `ffmpeg` program on PATH; write a .gif instead.")
        return animation.FFMpegWriter(fps=fps)
    raise ValueError(f"animate: `path` must end in .gif or .mp4, got {path.name!r}.")


def animate(
    traj,
    system,
    path,
    fps: int = 30,
    *,
    speed: float = 1.0,
    max_frames: int = 600,
    title: str = "",
    labels=None,
    frame_size: float | None = None,
    dpi: int = 80,
) -> pathlib.Path:
    r"""Write an animation of `traj` (a `Trajectory` of `system`) to `path`.

    **Arguments:**

    - `traj`, `system`: the run and the system it belongs to (`traj.q` has `system.nq`
      columns).
    - `path`: output file; the suffix picks the format, `.gif` (Pillow) or `.mp4`
      (needs `ffmpeg`).
    - `fps`: frames per second of the file.
    - `speed`: simulated seconds per second of playback (2 plays twice as fast).
    - `max_frames`: cap on the number of frames (the clock is thinned to fit).
    - `title`: figure title; a time stamp `t = ... s` is drawn on every frame.
    - `labels`: one legend label per body (default: none).
    - `frame_size`: axis length (m) for bodies drawn as frames; default 5 % of the scene.
    - `dpi`: resolution of the frames.

    **Returns:** the path written. **Raises:** `ValueError` for a bad suffix, `fps`,
    `speed` or a trajectory that does not match the system; `RuntimeError` for an MP4
    without `ffmpeg`.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = pathlib.Path(path)
    if isinstance(fps, bool) or not isinstance(fps, (int, np.integer)) or fps < 1:
        raise ValueError(f"animate: `fps` must be an int >= 1, got {fps!r}.")
    writer = _writer(path, int(fps))
    if not speed > 0:
        raise ValueError(f"animate: `speed` must be positive, got {speed!r}.")
    if np.shape(traj.q)[-1] != system.nq:
        raise ValueError(f"animate: `traj.q` has {np.shape(traj.q)[-1]} columns; the system has nq = {system.nq}.")
    if labels is not None and len(labels) != len(system.bodies):
        raise ValueError(f"animate: `labels` needs one entry per body ({len(system.bodies)}), got {len(labels)}.")
    t = np.asarray(traj.t)
    idx = _frame_indices(t, fps, speed, max_frames)
    q = jnp.asarray(traj.q)[idx]
    dim = max(b.dim for b in system.bodies)

    def polylines(size):
        out = []
        for i, body in enumerate(system.bodies):
            fn, style = outline(body, size)
            p = np.asarray(jax.jit(jax.vmap(fn))(q[:, system.body_slice(i)]))
            if p.shape[-1] < dim:  # a planar body in a 3D scene lies in z = 0
                p = np.concatenate([p, np.zeros(p.shape[:-1] + (dim - p.shape[-1],))], axis=-1)
            out.append((p, style))
        return out

    lines = polylines(1.0 if frame_size is None else frame_size)
    pts = np.concatenate([p.reshape(-1, p.shape[-1]) for p, _ in lines])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    if frame_size is None and any(style == "frame" for _, style in lines):
        lines = polylines(0.05 * float(np.max(hi - lo) or 1.0))
        pts = np.concatenate([p.reshape(-1, p.shape[-1]) for p, _ in lines])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
    half = 0.5 * max(float(np.max(hi - lo)), 1e-9) * (1 + 2 * MARGIN)
    mid = 0.5 * (lo + hi)

    fig = Figure(figsize=(5.5, 5.0))
    FigureCanvasAgg(fig)
    if dim == 3:
        ax = fig.add_subplot(projection="3d")
        ax.set_xlim(mid[0] - half, mid[0] + half)
        ax.set_ylim(mid[1] - half, mid[1] + half)
        ax.set_zlim(mid[2] - half, mid[2] + half)
        ax.set_xlabel("x [m]"), ax.set_ylabel("y [m]"), ax.set_zlabel("z [m]")
    else:
        ax = fig.add_subplot()
        ax.set_xlim(mid[0] - half, mid[0] + half)
        ax.set_ylim(mid[1] - half, mid[1] + half)
        ax.set_aspect("equal")
        ax.set_xlabel("x [m]"), ax.set_ylabel("y [m]")
        ax.grid(True, alpha=0.3)
    artists = []
    for k, (p, style) in enumerate(lines):
        kw = dict(_STYLE[style], label=None if labels is None else labels[k])
        artists.append(ax.plot(*[p[0, :, j] for j in range(p.shape[-1])], **kw)[0])
    if labels is not None:
        ax.legend(loc="upper right", fontsize=8)
    if title:
        ax.set_title(title)
    stamp = fig.text(0.02, 0.02, "", family="monospace")

    path.parent.mkdir(parents=True, exist_ok=True)
    with writer.saving(fig, str(path), dpi):
        for f in range(len(idx)):
            for artist, (p, _) in zip(artists, lines, strict=True):
                if dim == 3:
                    artist.set_data_3d(p[f, :, 0], p[f, :, 1], p[f, :, 2])
                else:
                    artist.set_data(p[f, :, 0], p[f, :, 1])
            stamp.set_text(f"t = {t[idx[f]]:.3f} s")
            writer.grab_frame()
    return path
