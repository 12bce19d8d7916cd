r"""Mesh logic shared by the planar and the spatial ANCF beams.

Both beams are chains of `n` equal two-node elements of length $l_e = L/n$ on a
straight reference axis. Node $k$ sits at arc length $s_k = k\,l_e$ and owns a block of
`node_shape = (rows, dim)` coordinates (its position, then its gradient vectors); element
$e$ uses nodes $e$ and $e + 1$. Along an element, $\xi = x/l_e \in [0, 1]$ and the axial
interpolation is cubic Hermite (`hermite`).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_shape, is_concrete


# -- construction checks ------------------------------------------------------------
def check_n_elements(owner: str, n_elements) -> None:
    """`n_elements` must be a (non-bool) int >= 1."""
    if isinstance(n_elements, bool) or not isinstance(n_elements, int) or n_elements < 1:
        raise ValueError(f"{owner}: `n_elements` must be an int >= 1, got {n_elements!r}.")


def check_order(owner: str, name: str, order) -> None:
    """A Gauss order `name` must be an int in 1..12."""
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 12:
        raise ValueError(f"{owner}: `{name}` must be an int Gauss order in 1..12, got {order!r}.")


# -- indexing ------------------------------------------------------------------------
def node_index(owner: str, node, n_elements: int) -> int:
    """Normalized index of `node` (static int; negative counts from the tip)."""
    n = n_elements
    if isinstance(node, bool) or not isinstance(node, int) or not -(n + 1) <= node <= n:
        raise ValueError(f"{owner}: node {node!r} does not exist; the beam has nodes 0..{n} (or -1 for the last).")
    return node % (n + 1)


def elements(q, n_elements: int, node_shape: tuple[int, int]):
    """Element coordinates `(n, 2 rows, dim)`: the rows of node $e$, then those of node
    $e + 1$."""
    nodes = jnp.reshape(q, (n_elements + 1, *node_shape))
    return jnp.concatenate([nodes[:-1], nodes[1:]], axis=1)


def element_at(q, e, node_shape: tuple[int, int]):
    """Coordinates `(2 rows, dim)` of element `e` (an int or a traced index)."""
    rows, dim = node_shape
    size = rows * dim
    return jnp.reshape(jax.lax.dynamic_slice(q, (size * e,), (2 * size,)), (2 * rows, dim))


def locate(s, element_length, n_elements: int):
    r"""Element index and local coordinate $\xi$ of arc length `s` (the element clipped
    to the beam, so points outside [0, L] are extrapolated from the end elements)."""
    u = s / element_length
    e = jnp.clip(jnp.floor(u), 0, n_elements - 1)
    return e.astype(int), u - e


# -- interpolation and quadrature ----------------------------------------------------
def hermite(xi):
    r"""Cubic Hermite functions $N_1..N_4$ and their first two $\xi$-derivatives.

    **Arguments:** `xi`: array of points in [0, 1] (any shape; NumPy or JAX).

    **Returns:** three arrays of shape `xi.shape + (4,)`: $N$, $dN/d\xi$, $d^2N/d\xi^2$.
    The slope functions $N_2$, $N_4$ are to be multiplied by $l_e$.
    """
    xp = jnp if isinstance(xi, jax.Array) else np
    x = xp.asarray(xi)
    x2, x3 = x * x, x * x * x
    one = xp.ones_like(x)
    N = xp.stack([1 - 3 * x2 + 2 * x3, x - 2 * x2 + x3, 3 * x2 - 2 * x3, x3 - x2], axis=-1)
    dN = xp.stack([-6 * x + 6 * x2, 1 - 4 * x + 3 * x2, 6 * x - 6 * x2, 3 * x2 - 2 * x], axis=-1)
    d2N = xp.stack([-6 + 12 * x, -4 + 6 * x, 6 - 12 * x, 6 * x - 2 * one], axis=-1)
    return N, dN, d2N


@functools.cache
def gauss(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [0, 1]."""
    x, w = np.polynomial.legendre.leggauss(order)
    return 0.5 * (x + 1), 0.5 * w


# -- mass ------------------------------------------------------------------------------
def chain_mass_product(m_e, E):
    r"""The assembled product $M a$ of a chain of equal elements, from the element matrix
    `m_e` (2k × 2k, on an element's node rows, acting alike on every component) and the
    element rows `E` (n, 2k, c) of $a$ (element $e$: the k rows of node $e$, then those of
    node $e + 1$).

    **Returns:** the node rows of $M a$, `(n + 1, k, c)`: each element's product added onto
    its two nodes, at a cost linear in n.
    """
    F = jnp.einsum("ij,ejc->eic", m_e, E)
    k = F.shape[1] // 2
    return jnp.pad(F[:, :k], ((0, 1), (0, 0), (0, 0))) + jnp.pad(F[:, k:], ((1, 0), (0, 0), (0, 0)))


# -- straight reference configuration ---------------------------------------------------
def check_segment(owner: str, start, end, n_elements, dim: int):
    """Checks of a straight beam from `start` to `end` (`dim`-vectors) in `n_elements`.

    **Returns:** `(start, d, length)`: the start as an array, the vector to the end and its
    length.
    """
    check_n_elements(owner, n_elements)
    start, end = jnp.asarray(start, float), jnp.asarray(end, float)
    check_shape(owner, "start", start, (dim,))
    check_shape(owner, "end", end, (dim,))
    d = end - start
    length = jnp.sqrt(d @ d)
    if is_concrete(length) and not float(length) > 0:
        raise ValueError(f"{owner}: `start` and `end` coincide.")
    return start, d, length


@functools.partial(jax.jit, static_argnames="n_elements")  # one small program, not an op per line
def straight_nodes(start, d, gradients, n_elements: int):
    r"""Coordinates of a straight, unstrained beam: node $k$ at $r_0 + \tfrac{k}{n} d$,
    followed by the same gradient rows `gradients` `(rows - 1, dim)` at every node.

    **Returns:** `q_b`, shape `((n_elements + 1) rows dim,)`.
    """
    n = n_elements
    frac = jnp.arange(n + 1, dtype=start.dtype) / n
    pos = start[None, :] + frac[:, None] * d[None, :]
    grads = jnp.broadcast_to(gradients[None], (n + 1, *gradients.shape))
    return jnp.concatenate([pos[:, None, :], grads], axis=1).reshape(-1)
