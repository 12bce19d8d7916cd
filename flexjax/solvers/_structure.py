r"""Static structure of the Newton matrix of an implicit step, and its compressed Jacobian.

The generalized-α Newton matrix $J = \partial R/\partial x$, $x = [\ddot q;\ \lambda]$ (and
$\mu$ in the index-2 form), has the rows $[M\ddot q + \Phi_q^T\lambda - Q;\ \Phi/(\beta' h^2)]$.
Its sparsity follows from the system's declared layout, never from a user flag:

- a body couples its own coordinates: all of them (`AbstractBody.coupling is None`, the
  safe default) or, for a meshed beam (`ElementChain`), those of one element at a time;
- a constraint row couples the coordinates it reads (a joint: the whole blocks of
  `body_i` and `body_j`, or one node of a beam where the joint declares it,
  `AbstractJoint.attached_nodes`); its multiplier column and its row touch those
  coordinates, and the Hessian of $\lambda^T\Phi$ couples them all with each other;
- a force element couples every coordinate of all its bodies, unless it declares that
  each body's force comes from that body alone (`AbstractForce.separable`).

`newton_structure` orders the unknowns to make that pattern banded (reverse
Cuthill-McKee, Cuthill & McKee 1969, with George & Liu's pseudo-peripheral start;
multipliers land next to the coordinates their rows read), moves the few unknowns with
very long rows and columns (a hub that many beams meet) to a dense *border*, and returns
`None` when banded storage would not pay (small systems, wide bands: rigid mechanisms,
the parallel robot). For a banded order of half-bandwidth $b$ the columns $j$ and
$j + 2b + 1$ never share a row, so $2b+1$ forward-mode passes with the seeds
$\sum_{j \equiv c \ (2b+1)} e_j$ give every band entry (Curtis, Powell & Reid 1974); each
border column takes one more forward pass and each border row one reverse pass. That
replaces the $n$ passes of `jax.jacfwd`.

Usage (`banded` holds the factorization):

```python
st = structure.newton_structure(system, index2=False)  # static; None: use dense matrices
r, J = structure.value_and_jacobian(residual, x, st)    # R(x) and the BandedMatrix (or `jacobian`)
ok = structure.probe_error(J) <= structure.PROBE_TOL    # the declared pattern held
F = banded.factor(J)
dx = banded.solve(F, r)                                 # J^{-1} r
y = structure.matvec(J, v)                              # J v
```

**Safety.** A wrong declaration must not give a wrong answer silently. `jacobian` also
evaluates the residual's derivative along one fixed dense direction $d$; `probe_error`
compares it with `matvec(J, d)` row by row, relative to $|J||d|$: any entry outside the
declared pattern (which the colouring would fold onto a band entry, or drop) shows up
there, rounding does not (about 1e-15). Callers fall back to the dense matrix when it
exceeds `PROBE_TOL`. It matters where the matrix is used as the exact Jacobian (full
Newton steps, the solves of implicit differentiation); a kept (modified-Newton) matrix
only preconditions iterations on the exact residual, so a wrong one costs iterations,
never accuracy.

The rest of the module: `matvec`, `to_dense`, `from_dense` (a dense matrix in this
storage), `pattern` (the declared sparsity as a dense boolean matrix, for checks).

Storage (`BandedMatrix`, in the permuted order `order` of the band unknowns): the band
part $A$ as block rows `blocks[k] = A[ks:(k+1)s, (k-1)s:(k+2)s]` with block size
$s \ge b$ (block tridiagonal), padded with identity rows to a whole number of blocks;
the border columns `col` ($A$ rows × border), rows `row` and `corner`.
"""

import dataclasses
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

MIN_SIZE = 100  # unknowns: below this the dense matrix is cheap enough
MIN_BLOCK = 8  # smallest block size of the block-tridiagonal storage (scan steps cost more than flops)
LANE_RATIO = 4  # banded only when n >= LANE_RATIO * (forward and reverse passes)
BORDER_DEGREE = 4  # an unknown with more than this many times the median number of neighbours ...
BORDER_MIN_DEGREE = 32  # ... and more than this joins the border
PROBE_TOL = 1e-10  # largest accepted `probe_error`
_PROBE_SEED = 20240521


@dataclasses.dataclass(frozen=True)
class NewtonStructure:
    r"""Static, hashable description of a bordered banded matrix of size `n`.

    - `order`: the band unknowns (indices into $x$ and into the residual rows), in band
      order: $A_{pq} = J[\text{order}_p, \text{order}_q]$, zero unless $|p - q| \le$ `bandwidth`;
    - `border`: the other unknowns, whose rows and columns are stored dense;
    - `bandwidth`: half-bandwidth $b$ of $A$;
    - `block`: block size $s \ge b$ of the block-tridiagonal storage.
    """

    n: int
    order: tuple[int, ...]
    border: tuple[int, ...]
    bandwidth: int
    block: int

    def __post_init__(self):
        if sorted(self.order + self.border) != list(range(self.n)):
            raise ValueError("NewtonStructure: `order` and `border` must split range(n).")
        if not (0 <= self.bandwidth <= self.block and self.block >= 1 and self.order):
            raise ValueError(
                f"NewtonStructure: need 0 <= bandwidth <= block and a non-empty band, got "
                f"bandwidth {self.bandwidth}, block {self.block}, {len(self.order)} band unknowns."
            )

    @property
    def nblocks(self) -> int:
        return -(-len(self.order) // self.block)

    @property
    def colours(self) -> int:
        """Forward passes for the band: $2b + 1$ (fewer for a band narrower than that)."""
        return min(2 * self.bandwidth + 1, len(self.order))

    @property
    def passes(self) -> int:
        """Forward plus reverse passes of `jacobian` (with the probe)."""
        return self.colours + 2 * len(self.border) + 1

    @functools.cached_property
    def _lane(self) -> np.ndarray:
        """(n,) int: the forward pass that seeds each unknown, its colour (band) or
        `colours + k` (border unknown k)."""
        lane = np.empty(self.n, int)
        lane[np.asarray(self.order)] = np.arange(len(self.order)) % self.colours
        lane[np.asarray(self.border, int)] = self.colours + np.arange(len(self.border))
        return lane

    @functools.cached_property
    def _block_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For each entry of `blocks` (nblocks, s, 3s): its row and column in band order
        (clipped into the band), whether it lies inside the band, and the identity of the
        padding rows."""
        s, na = self.block, len(self.order)
        k, r, c = np.meshgrid(np.arange(self.nblocks), np.arange(s), np.arange(3 * s), indexing="ij")
        p, q = k * s + r, (k - 1) * s + c
        inside = (p < na) & (q >= 0) & (q < na) & (np.abs(p - q) <= self.bandwidth)
        return np.clip(p, 0, na - 1), np.clip(q, 0, na - 1), inside, ((p >= na) & (p == q)).astype(float)

    @functools.cached_property
    def _inverse(self) -> np.ndarray:
        """Position of each unknown in `order + border`."""
        return np.argsort(np.asarray(self.order + self.border))


def probe_direction(n: int) -> np.ndarray:
    """The fixed dense direction of the pattern check: entries of modulus in [0.5, 1.5],
    random signs (no entry small enough to hide a column)."""
    rng = np.random.default_rng(_PROBE_SEED)
    return rng.uniform(0.5, 1.5, n) * rng.choice([-1.0, 1.0], n)


class BandedMatrix(eqx.Module):
    """A square matrix in bordered block-tridiagonal storage (see the module docstring):
    `blocks` (nblocks, s, 3s), `col` (nblocks s, nb), `row` (nb, nblocks s), `corner`
    (nb, nb), and `probe`, the residual's derivative along `probe_direction(n)` when it
    came from `jacobian` (`probe_error`)."""

    blocks: Float[Array, "k s 3*s"]
    col: Float[Array, "N nb"]
    row: Float[Array, "nb N"]
    corner: Float[Array, "nb nb"]
    probe: Float[Array, " n"]
    structure: NewtonStructure = eqx.field(static=True)


# -- the matrix ------------------------------------------------------------------------------
def jacobian(residual, x: Float[Array, " n"], st: NewtonStructure) -> BandedMatrix:
    r"""$\partial R/\partial x$ at `x` in compact form (`value_and_jacobian` without the value)."""
    return value_and_jacobian(residual, x, st)[1]


def value_and_jacobian(residual, x: Float[Array, " n"], st: NewtonStructure) -> tuple[Array, BandedMatrix]:
    r"""$R(x)$ and $\partial R/\partial x$ in compact form: `st.colours` forward passes for
    the band (column colouring), one forward pass per border column, one reverse pass per
    border row, and one forward pass along the probe direction (`probe_error`). Exact:
    each band entry is one term of its compressed column (no other column of its colour
    reaches its row)."""
    order, border, w, nb = np.asarray(st.order), np.asarray(st.border, int), st.colours, len(st.border)
    unit = lambda lanes, at: (jnp.arange(lanes)[:, None] == jnp.asarray(at)[None, :]).astype(x.dtype)
    seeds = jnp.concatenate([unit(w + nb, st._lane), jnp.asarray(probe_direction(st.n), x.dtype)[None]])
    if nb:  # one linearization for the forward passes and the reverse ones
        value, linear = jax.linearize(residual, x)
        cols = jax.vmap(linear)(seeds)
        transpose = jax.linear_transpose(linear, x)
        rows = jax.vmap(lambda e: transpose(e)[0])(unit(st.n, border).T)
    else:
        value, cols = jax.vmap(lambda d: jax.jvp(residual, (x,), (d,)), out_axes=(None, 0))(seeds)
        rows = jnp.zeros((0, st.n), cols.dtype)
    p, q, inside, pad = st._block_entries
    # band entry (p, q) is the lane of q's colour at row p
    blocks = jnp.where(inside, cols[q % w, order[p]], jnp.asarray(pad, cols.dtype))
    return value, BandedMatrix(
        blocks,
        _pad_rows(cols[w : w + nb][:, order].T, st),
        _pad_rows(rows[:, order].T, st).T,
        rows[:, border],
        cols[-1],
        st,
    )


def from_dense(A: Float[Array, "n n"], st: NewtonStructure) -> BandedMatrix:
    """The entries of `A` that `st` can hold (the others are dropped), with `probe` = A d."""
    order, border = np.asarray(st.order), np.asarray(st.border, int)
    p, q, inside, pad = st._block_entries
    blocks = jnp.where(inside, A[order[p], order[q]], jnp.asarray(pad, A.dtype))
    return BandedMatrix(
        blocks,
        _pad_rows(A[order][:, border], st),
        _pad_rows(A[border][:, order].T, st).T,
        A[border][:, border],
        A @ jnp.asarray(probe_direction(st.n), A.dtype),
        st,
    )


def matvec(J: BandedMatrix, v: Float[Array, " n"]) -> Float[Array, " n"]:
    """$J v$ from the compact form."""
    st = J.structure
    s, na = st.block, len(st.order)
    vb = v[np.asarray(st.border, int)]
    vp = jnp.pad(v[np.asarray(st.order)], (s, (st.nblocks + 1) * s - na))
    windows = vp[np.arange(st.nblocks)[:, None] * s + np.arange(3 * s)[None, :]]
    y = jnp.reshape(jnp.einsum("krc,kc->kr", J.blocks, windows), (-1,)) + J.col @ vb
    y_border = J.row @ vp[s : s + st.nblocks * s] + J.corner @ vb
    return jnp.concatenate([y[:na], y_border])[st._inverse]


def to_dense(J: BandedMatrix) -> Float[Array, "n n"]:
    """The dense matrix (for checks and small problems)."""
    n = J.structure.n
    return jax.vmap(lambda e: matvec(J, e), out_axes=1)(jnp.eye(n, dtype=J.blocks.dtype))


def probe_error(J: BandedMatrix) -> Float[Array, ""]:
    r"""$\max_i |(J d)_i - R'(x)d_i| / (|J||d|)_i$ for the probe direction $d$: about
    1e-15 when the residual's Jacobian lies inside the declared pattern, O(1) in a row
    where an entry outside it was folded or dropped (NaN for a non-finite Jacobian)."""
    d = jnp.asarray(probe_direction(J.structure.n), J.probe.dtype)
    scale = matvec(jax.tree_util.tree_map(jnp.abs, J), jnp.abs(d))
    diff = jnp.abs(matvec(J, d) - J.probe)
    return jnp.max(diff / jnp.maximum(scale, jnp.finfo(d.dtype).tiny))


def _pad_rows(X, st):
    """Rows in band order padded to whole blocks."""
    return jnp.pad(X, ((0, st.nblocks * st.block - X.shape[0]), (0, 0)))


# -- the structure ---------------------------------------------------------------------------
def newton_structure(
    system, index2: bool = False, *, min_size: int = MIN_SIZE, lane_ratio: float = LANE_RATIO
) -> NewtonStructure | None:
    r"""The structure of the generalized-α Newton matrix of `system`, or `None` where dense
    storage is the better choice: fewer than `min_size` unknowns, a band or border so wide
    that the compressed Jacobian would need more than $n$/`lane_ratio` passes, or
    velocity-level constraints (benchmarks lower both limits to time small systems).

    Unknowns and rows are $[\ddot q;\ \lambda]$, with `index2` also $\mu$ (the rows of
    $\dot\Phi$), in `System.constraints` order. Reads only static layout (types, indices,
    nodes), so it may be called on a traced system; cached on that layout."""
    if system.velocity_constraints:
        return None
    layout = _layout(system)
    nq, m = system.nq, system.nconstraints
    n = nq + m * (2 if index2 else 1)
    widest = max((len(c) for c in layout[0]), default=0)
    if n < min_size or lane_ratio * (2 * widest - 1) > n:
        return None  # a clique of c unknowns costs 2c - 1 passes in the band, 2c in the border
    st = _structure(layout, nq, bool(index2), n)
    return st if lane_ratio * st.passes <= n else None


def pattern(system, index2: bool = False) -> np.ndarray:
    """The declared sparsity of the Newton matrix, (n, n) bool: True where an entry may be
    nonzero. For checks; `newton_structure` stores a band that covers it."""
    nq, m = system.nq, system.nconstraints
    n = nq + m * (2 if index2 else 1)
    i, j = _edges(_layout(system), nq, index2)
    P = np.zeros((n, n), bool)
    P[i, j] = True
    return P


def _layout(system):
    """`(cliques, constraints)`: coordinate index sets coupled among themselves (body
    elements, force elements, constraint Hessians), and per constraint group (a body's
    internal constraints, a joint) its row count and the coordinates it reads; as
    hashable tuples."""
    blocks = [tuple(range(system.offsets[b], system.offsets[b + 1])) for b in range(len(system.bodies))]

    def read(b, node):
        body = system.bodies[b]
        chain = body.coupling
        if node is None or chain is None or body.ncoords % chain.stride:
            return blocks[b]
        nodes = body.ncoords // chain.stride
        if isinstance(node, bool) or not isinstance(node, int) or not -nodes <= node < nodes:
            return blocks[b]
        start = system.offsets[b] + chain.stride * (node % nodes)
        return tuple(range(start, start + chain.stride))

    cliques, constraints = [], []
    for b, body in enumerate(system.bodies):
        chain = body.coupling
        if chain is None or chain.width < chain.stride or (body.ncoords - chain.width) % chain.stride:
            cliques.append(blocks[b])
        else:
            o = system.offsets[b]
            cliques += [
                tuple(range(o + e, o + e + chain.width)) for e in range(0, body.ncoords - chain.width + 1, chain.stride)
            ]
        if body.nconstraints:
            constraints.append((body.nconstraints, blocks[b]))
    for joint in system.joints:
        node_i, node_j = joint.attached_nodes
        touched = read(joint.body_i, node_i) + (() if joint.body_j is None else read(joint.body_j, node_j))
        constraints.append((joint.nconstraints, tuple(sorted(set(touched)))))
    for f, bodies in zip(system.force_elements, system.force_bodies, strict=True):
        if not f.separable:
            cliques.append(tuple(sorted(set().union(*(blocks[b] for b in bodies)))))
    cliques += [c for _, c in constraints if c]
    return tuple(cliques), tuple(constraints)


def _clique_edges(cliques):
    i = np.concatenate([np.repeat(c, len(c)) for c in map(np.asarray, cliques)] + [np.zeros(0, int)])
    j = np.concatenate([np.tile(c, len(c)) for c in map(np.asarray, cliques)] + [np.zeros(0, int)])
    return i.astype(int), j.astype(int)


def _edges(layout, nq, index2):
    r"""Symmetric pattern `(i, j)` (with the diagonal) of the Newton matrix: see the module
    docstring; with `index2`, $\mu_k$ moves $q$ along $\Phi_{k,q}^T$, so its column
    reaches every row coupled to the coordinates row $k$ reads, and the rows of
    $\Phi$ and $\dot\Phi$ that read any of them."""
    cliques, constraints = layout
    ci, cj = _clique_edges(cliques)
    m = sum(count for count, _ in constraints)
    n = nq + m * (2 if index2 else 1)
    parts = [(ci, cj), (np.arange(n), np.arange(n))]
    start = nq
    groups = []
    for count, touched in constraints:
        rows = np.arange(start, start + count)
        t = np.asarray(touched, int)
        parts.append((np.repeat(rows, len(t)), np.tile(t, count)))
        groups.append((rows, t))
        start += count
    if index2:
        sort = np.argsort(ci, kind="stable")
        indptr, neighbour = np.searchsorted(ci[sort], np.arange(nq + 1)), cj[sort]
        for rows, t in groups:
            near = np.unique(np.concatenate([neighbour[indptr[c] : indptr[c + 1]] for c in t] + [t]))
            mu = rows + m
            reach = [near]  # the coordinates coupled to those the rows read
            for rows_h, t_h in groups:
                if np.intersect1d(t, t_h).size:
                    reach += [rows_h, rows_h + m]
            reach = np.concatenate(reach)
            parts.append((np.repeat(mu, len(reach)), np.tile(reach, len(mu))))
    i = np.concatenate([p[0] for p in parts])
    j = np.concatenate([p[1] for p in parts])
    code = np.unique(np.concatenate([i * n + j, j * n + i]))
    return code // n, code % n


@functools.lru_cache(maxsize=64)
def _structure(layout, nq, index2, n):
    i, j = _edges(layout, nq, index2)
    off = i != j
    i, j = i[off], j[off]
    degree = np.bincount(i, minlength=n)
    threshold = max(BORDER_MIN_DEGREE, BORDER_DEGREE * float(np.median(degree)))
    in_border = degree > threshold
    while True:  # a multiplier whose coordinates are all in the border would leave A singular: it joins them
        band_degree = np.bincount(i[~in_border[j]], minlength=n)
        lonely = ~in_border & (band_degree == 0) & (np.arange(n) >= nq) & (degree > 0)
        if not lonely.any():
            break
        in_border |= lonely
    band = ~in_border[i] & ~in_border[j]
    order = _reverse_cuthill_mckee(n, i[band], j[band], ~in_border)
    position = np.empty(n, int)
    position[order] = np.arange(len(order))
    b = int(np.max(np.abs(position[i[band]] - position[j[band]]), initial=0))
    border = tuple(int(v) for v in np.flatnonzero(in_border))
    return NewtonStructure(n, tuple(int(v) for v in order), border, b, max(b, MIN_BLOCK))


def _reverse_cuthill_mckee(n, i, j, active):
    """Reverse Cuthill-McKee order of the `active` vertices of the graph with the
    (symmetric) edges `(i, j)`, one connected component after the other, each started
    at a pseudo-peripheral vertex (George & Liu 1979). Level by level: the next level
    is the unvisited neighbours of this one, ordered by their first neighbour's
    position, then by degree, then by index (Cuthill & McKee 1969)."""
    sort = np.lexsort((j, i))
    i, j = i[sort], j[sort]
    indptr = np.searchsorted(i, np.arange(n + 1))
    degree = np.diff(indptr)

    def levels(start, seen):
        seen = seen.copy()
        seen[start] = True
        level, out = np.array([start]), []
        while level.size:
            out.append(level)
            counts = degree[level]
            rank = np.repeat(np.arange(level.size), counts)
            at = np.repeat(indptr[level] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            nbr = j[at]
            new = ~seen[nbr]
            nbr, rank = nbr[new], rank[new]
            key = np.lexsort((nbr, degree[nbr], rank))
            nbr = nbr[key]
            _, first = np.unique(nbr, return_index=True)
            level = nbr[np.sort(first)]
            seen[level] = True
        return out

    visited = ~np.asarray(active, bool)
    order = []
    while not visited.all():
        free = np.flatnonzero(~visited)
        start = int(free[np.argmin(degree[free])])
        found = levels(start, visited)
        while True:  # pseudo-peripheral start: the deepest level's lowest-degree vertex, while that deepens
            last = found[-1]
            candidate = int(last[np.argmin(degree[last])])
            again = levels(candidate, visited)
            if len(again) <= len(found):
                break
            start, found = candidate, again
        component = np.concatenate(found)
        visited[component] = True
        order.append(component)
    return np.concatenate(order)[::-1] if order else np.zeros(0, int)
