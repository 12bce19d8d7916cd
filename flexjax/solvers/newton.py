r"""Newton strategies for the implicit step of `GeneralizedAlpha`.

A strategy solves the step's residual $R(x) = 0$ for $x = [\ddot q; \lambda(; \mu)]$,
measuring increments in position units (`Increment`), and reports a `NewtonResult`.
It is a field of the solver, as diffrax makes its root finder one:

- `FullNewton`: the Newton matrix $R_x$ formed by autodiff and factored at every
  iteration (quadratic convergence; its cost per iteration grows like $n^3$).
- `KeptNewton` (the default): the inverse Newton matrix is kept across iterations
  *and steps* (`KeptMatrix`, in the solver's loop state) and formed anew only when the
  measured contraction of the increments says it pays: missing, contracting slower than
  `contraction_max`, predicted not to converge within the iteration cap, or stale after
  `reuse_iterations` iterations of one step. An increment of the kept matrix that
  grew is not taken (the new matrix is formed where the increments still shrank, or at
  the step's start for a matrix from an earlier step). An
  iteration with the kept matrix costs one residual and one matrix-vector product.
  Under `vmap` every sample keeps its own matrix and decides for itself: a new matrix
  is formed by each sample that asks for one, on its own (`formed_where`), so a
  sample's iterates are those of its own run and a batch pays for the matrices its
  samples ask for, not for the whole batch whenever one of them asks. With `shared=True` the
  batch keeps one matrix (`GeneralizedAlpha(shared_matrix=True)`).

Both take a per-sample `healthy` flag: a sample whose run has failed takes no
iteration and no part in the batch's decisions (the loop condition, the refresh) nor,
with a shared matrix, in the statistics the matrix is formed from; neither does, from
the moment it stops, a sample that stops unconverged within the step.

Both converge to the same tolerance; results agree to it, and gradients are the same
(implicit differentiation at the converged point, `flexjax.solvers._implicit`).
"""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.experimental.layout import Layout, with_layout_constraint
from jaxtyping import Array, Float

from . import _banded as banded, _dense as dense
from ._batching import batch_any, formed_where, max_abs, sum_last, update_where

# A kept matrix converges linearly: its iterate's error is about the estimate, where a
# Newton step's is far below the increment it accepts. Velocity errors of h^-1 times that
# accumulate over the steps (a pendulum rattling in a 1 um clearance joint drifted 1e-5 m
# from the full-Newton run in 5000 steps); holding the estimate to a tenth of the
# tolerance brought that to 5e-8 m for about 5 % more iterations.
KEPT_MARGIN = 10.0


class Increment(eqx.Module):
    r"""How Newton increments are measured: in position units, where round-off has a
    floor of $\epsilon |q|$ whatever the step size. $\Delta q = \beta' h^2 \Delta\ddot q$,
    $\beta' h^2 \Delta\lambda / \bar m$ ($\bar m$: largest diagonal entry of the mass
    block) and $\beta' h^2 \Delta\mu$ (index-2 rows), against `tol`
    (`atol + rtol * max|q|`): `increment(dx) <= 1` means converged."""

    n_dyn: int = eqx.field(static=True)
    m: int = eqx.field(static=True)
    beta_h2: Float[Array, ""]
    tol: Float[Array, ""]
    m_bar: Float[Array, ""] | None = None

    def __call__(self, dx, J=None):
        m_bar = max_abs(jnp.diagonal(J)[: self.n_dyn]) if self.m_bar is None else self.m_bar
        dq = self.beta_h2 * dx[..., : self.n_dyn]
        dl = self.beta_h2 * dx[..., self.n_dyn : self.n_dyn + self.m] / m_bar
        dmu = self.beta_h2 * dx[..., self.n_dyn + self.m :]
        err = max_abs(jnp.concatenate([dq, dl, dmu], axis=-1)) / self.tol
        return jnp.where(jnp.isfinite(err), err, jnp.inf)


# Up to this many unknowns the kept matrix is an explicit inverse: an iteration is then one
# fused matrix-vector product. Above it, its LU factors: forming them costs a third of an
# inverse (2n^3/3 against 2n^3 flops), and an iteration two triangular solves.
INVERSE_MAX = 128


class Preconditioner(eqx.Module):
    r"""A kept Newton matrix as an approximate inverse $P pprox R_x^{-1}$: `apply(b)` is
    $P b$ and `apply_t(b)` is $P^T b$ (`b` batched along leading axes).

    - `kind="inverse"`: `factor = (inv_t,)`, the transposed inverse (the product `b @
      inv_t` keeps a batch's samples as rows: faster on CPU than `inv @ b`).
    - `kind="lu"`: `factor = (lu, pivots)` of `jax.scipy.linalg.lu_factor`.
    - `kind="banded"`: `factor = (F,)`, a `banded.BandedLU` of the Newton matrix formed
      by coloured forward passes in the order `structure.newton_structure` found.
    """

    factor: tuple
    kind: str = eqx.field(static=True, default="inverse")
    transposed: bool = eqx.field(static=True, default=False)

    def apply(self, b):
        if self.kind == "lu":
            return _lu_solve(self.factor, b, int(self.transposed))
        if self.kind == "banded":
            return (banded.solve_transpose if self.transposed else banded.solve)(self.factor[0], b)
        return b @ (self.factor[0].T if self.transposed else self.factor[0])

    @property
    def T(self) -> "Preconditioner":
        """$P^T$."""
        return Preconditioner(self.factor, self.kind, not self.transposed)


def _lu_solve(factor, b, trans):
    import jax.scipy.linalg as jsl

    # lu_solve wants right-hand sides as columns
    return (
        jsl.lu_solve(factor, b.T if b.ndim > 1 else b, trans=trans).T
        if b.ndim > 1
        else jsl.lu_solve(factor, b, trans=trans)
    )


def kept_kind(n: int, inverse_only: bool, st=None) -> str:
    """How a kept matrix of `n` unknowns is stored: `"banded"` where the system's
    declared layout gives a banded Newton matrix (`st`, `structure.newton_structure`),
    else `"inverse"` up to `INVERSE_MAX` unknowns and `"lu"` above. `inverse_only`
    where an explicit inverse is needed (a shared batch matrix with its first-order
    change, a turned matrix, a pseudo-inverse); `"lu"` also not where batched LAPACK may
    hang (`dense`)."""
    if inverse_only:
        return "inverse"
    if st is not None:
        return "banded"
    return "inverse" if n <= INVERSE_MAX or dense._lapack_may_hang() else "lu"


def factorize(J, kind: str):
    """The kept factor of the Newton matrix `J` (see `Preconditioner`): dense `J` for
    `"inverse"` and `"lu"`, a `structure.BandedMatrix` for `"banded"`."""
    if kind == "lu":
        return dense.lu_factor(J)
    if kind == "banded":
        return (banded.factor(J),)
    inv_t = dense.inverse(J.T)
    # LAPACK returns the inverse column-major, and the product of every iteration wants
    # its operands row-major: XLA then kept the matrix column-major across the Newton
    # loop and copied it (transposing) before every product. Asking for row-major here
    # makes that one copy per formation (docs/performance.md, "The kept matrix's layout").
    return (with_layout_constraint(inv_t, Layout(major_to_minor=(0, 1))),)


class KeptMatrix(eqx.Module):
    r"""A kept Newton matrix, part of the solver's loop state.

    - `factor`: the matrix as stored (`Preconditioner`, `kind`): the transposed inverse,
      its LU factors, or with a shared batch matrix
      $[\bar J^{-1};\ \bar J^{-1} J' \bar J^{-1}]^T$ (n x 2n): the batch's inverse and
      its first-order change along the batch's parameter direction.
    - `valid`: 1 once formed, else 0 (floating point, like every auxiliary output of an
      implicitly differentiated solve).
    - `coord`: with a shared matrix, the sample's coordinate $t$ along that direction.
    - `ref`: with `corotate`, the position the matrix is turned to.
    """

    factor: tuple
    valid: Float[Array, ""]
    coord: Float[Array, ""] | None = None
    ref: Float[Array, " nq"] | None = None
    kind: str = eqx.field(static=True, default="inverse")

    @property
    def inv_t(self):
        return self.factor[0]

    def preconditioner(self, n: int) -> Preconditioner:
        """The kept matrix as an approximate inverse of the `n` x `n` Newton matrix (a
        shared batch matrix without its first-order change)."""
        if self.kind in ("lu", "banded"):
            return Preconditioner(self.factor, self.kind)
        return Preconditioner((self.factor[0][:, :n],), "inverse")


class NewtonResult(eqx.Module):
    """What a Newton solve reports: scaled `error` (<= 1 converged), `iterations`,
    `jacobians` (Newton matrices formed) and the `kept` matrix to carry to the next
    step (`None` for `FullNewton`). Counts are floating point: implicit differentiation
    gives its auxiliary outputs zero tangents."""

    error: Float[Array, ""]
    iterations: Float[Array, ""]
    jacobians: Float[Array, ""]
    kept: KeptMatrix | None = None


def linear_solve(J, r, least_squares: bool = False):
    """`J^{-1} r` (`dense.solve`: LU, or batched Gauss-Jordan where batched LAPACK may
    hang), or with `least_squares` the minimum-norm least-squares solution (SVD;
    singular values below 1e-10 of the largest are dropped), which stays exact for
    consistent systems whose matrix is rank deficient (redundant constraints)."""
    if least_squares:
        return jnp.linalg.lstsq(J, r, rcond=1e-10)[0]
    return dense.solve(J, r)


class AbstractNewton(eqx.Module):
    """A Newton strategy (see the module docstring)."""

    @abc.abstractmethod
    def init(self, n: int, dtype, kind: str = "inverse", st=None) -> KeptMatrix | None:
        """The kept state before the first step (`None` if it keeps nothing)."""

    @abc.abstractmethod
    def solve(
        self,
        residual,
        x0,
        increment: Increment,
        max_iter: int,
        kept,
        fresh,
        turn=None,
        least_squares=False,
        healthy=True,
    ):
        r"""`(x, NewtonResult)` for `residual(x) = 0` from `x0`. `kept` is the carried
        state, `fresh(x, ok) -> (factor, coord)` forms a new kept matrix at `x` (a shared
        one from the samples where `ok`); `turn`, with `corotate`: `(position,
        predicted)`, the map `(x, ok) -> position` a matrix is referred to and this
        step's predicted position. A sample that is not `healthy` takes no iteration:
        `x0` comes back with an infinite error."""


def _iterating(it, err, max_iter):
    """Whether Newton takes another iteration: always a first one, then while the
    scaled increment is finite and above 1 and iterations are left."""
    return (it == 0) | ((it < max_iter) & (err > 1.0) & jnp.isfinite(err))


class FullNewton(AbstractNewton):
    """A new Newton matrix at every iteration (autodiff Jacobian, LU or least squares)."""

    def init(self, n, dtype, kind="inverse", st=None):
        return None

    def solve(self, residual, x0, increment, max_iter, kept, fresh, turn=None, least_squares=False, healthy=True):
        def cond(c):
            x, it, err = c
            return healthy & _iterating(it, err, max_iter)

        def body(c):
            x, it, _ = c
            J, r = jax.jacfwd(lambda y: (r := residual(y), r), has_aux=True)(x)
            dx = linear_solve(J, r, least_squares)
            return x - dx, it + 1, increment(dx, J)

        x, it, err = jax.lax.while_loop(cond, body, (x0, jnp.array(0), jnp.array(jnp.inf, x0.dtype)))
        it = it.astype(x.dtype)
        # quadratic convergence: the error left after the last increment is far below it
        return x, NewtonResult(err, it, it)

    def solve_with_residual(self, residual, x0, increment, max_iter):
        """`solve`'s iterates, plus max |R| at the returned x: the Newton matrix is formed
        once more there and its residual read (the primal of that linearization), where a
        caller that reports the residual would otherwise evaluate it after the loop, a
        second copy of the model in its program (`solve_static`). Costs one matrix more
        per solve at run time."""

        def body(c):
            x, _, it, err, _ = c
            J, r = jax.jacfwd(lambda y: (r := residual(y), r), has_aux=True)(x)
            stop = ~_iterating(it, err, max_iter)
            dx = linear_solve(J, r)
            new = (x - dx, it + 1, increment(dx, J))
            x, it, err = (jnp.where(stop, a, b) for a, b in zip((x, it, err), new, strict=True))
            return x, jnp.max(jnp.abs(r)), it, err, stop

        inf = jnp.array(jnp.inf, x0.dtype)
        x, r, it, err, _ = jax.lax.while_loop(lambda c: ~c[4], body, (x0, inf, jnp.array(0), inf, jnp.array(False)))
        it = it.astype(x.dtype)
        return x, NewtonResult(err, it, it), r


class KeptNewton(AbstractNewton):
    r"""The Newton matrix kept across iterations and steps (see the module docstring).

    - `contraction_max`: form a new matrix when an increment shrank by less than this
      factor relative to the previous one.
    - `reuse_iterations`: ... or after this many iterations of one step with the
      matrix it started with.
    - `shared`: one matrix for a whole `vmap` batch (`GeneralizedAlpha(shared_matrix=True)`).

    Convergence is linear with the measured rate $\theta_k = e_k/e_{k-1}$ of the
    increments, so the error left after iteration $k$ is at most
    $\theta_k/(1-\theta_k)\,e_k$ (a geometric series), which is what is tested. A step
    with a kept matrix is accepted only after its rate has been measured (two
    iterations) and once that bound is below a tenth of the tolerance (`KEPT_MARGIN`);
    an iteration with a new matrix (a Newton step) is accepted like `FullNewton`'s.
    """

    contraction_max: float = eqx.field(static=True, default=0.5)
    reuse_iterations: int = eqx.field(static=True, default=6)
    shared: bool = eqx.field(static=True, default=False)

    def __check_init__(self):
        if not 0.0 < self.contraction_max < 1.0 or self.reuse_iterations < 1:
            raise ValueError("KeptNewton: need 0 < contraction_max < 1 and reuse_iterations >= 1.")

    def init(self, n, dtype, kind="inverse", st=None):
        if kind == "banded":
            factor = (banded.zeros(st, dtype),)
        elif kind == "lu":
            factor = (jnp.zeros((n, n), dtype), jnp.zeros((n,), jnp.int32))
        else:
            factor = (jnp.zeros((n, 2 * n if self.shared else n), dtype),)
        return KeptMatrix(
            factor=factor, valid=jnp.zeros((), dtype), coord=jnp.zeros((), dtype) if self.shared else None, kind=kind
        )

    def solve(self, residual, x0, increment, max_iter, kept, fresh, turn=None, least_squares=False, healthy=True):
        n = x0.shape[0]
        position, predicted = turn if turn is not None else (None, None)

        def active(it, err):
            return healthy & _iterating(it, err, max_iter)

        # Under vmap the loop runs while any sample is active (`batch_any`), and samples
        # that are done keep their carries by `where`. The per-sample scalars travel as
        # one array [iterations, error, previous increment, rate, matrices formed],
        # updated by one fused `where` instead of one small kernel each.
        def cond(c):
            return batch_any(active(c[1][..., 0], c[1][..., 1]))

        def body(c):
            x, scalars, matrix, ref = c
            it, err, inc_prev, theta, njac = (scalars[..., k] for k in range(5))
            on = active(it, err)
            # the samples a shared matrix is formed from: the healthy ones still iterating
            # or converged, not one that stopped unconverged (NaN, or out of iterations)
            ok = healthy & (on | (err <= 1.0))
            make = (lambda x: (fresh(x, ok), ref)) if turn is None else (lambda x: (fresh(x, ok), position(x, ok)))
            rate = jnp.minimum(theta, 0.99)
            # iterations still needed at this rate (err shrinks by `rate` per iteration)
            needed = jnp.log(jnp.maximum(err, 1.0)) / -jnp.log(jnp.maximum(rate, 1e-300))
            hopeless = (it > 1) & (it + needed > max_iter)
            need = on & (
                ((it == 0) & (kept.valid == 0))  # none yet
                | (theta > self.contraction_max)
                | hopeless
                | ((njac == 0) & (it >= self.reuse_iterations))
            )
            if self.shared:  # one matrix for the batch: whoever asks, all take it
                (matrix, ref), refreshed = update_where(need, make, x, (matrix, ref))
                refreshed = jnp.broadcast_to(refreshed, it.shape)
            else:  # formed by the samples that ask, each on its own
                matrix, ref = formed_where(need, make, x, (matrix, ref))
                refreshed = need
            factor, coord = matrix
            r = residual(x)
            dx = Preconditioner(factor, kept.kind).apply(r)
            if coord is not None:  # (J + t J')^{-1} = J^{-1} - t J^{-1} J' J^{-1} + O(t^2)
                dx = dx[..., :n] - coord * dx[..., n:]
            inc = increment(dx)
            theta_new = jnp.where(refreshed | (it == 0), 0.0, jnp.where(inc_prev > 0, inc / inc_prev, 0.0))
            rate = jnp.minimum(theta_new, 0.99)
            err_new = inc * jnp.maximum(1.0, rate / (1.0 - rate)) * jnp.where(refreshed, 1.0, KEPT_MARGIN)
            # diverging, or a kept matrix whose rate is not measured yet, never accepted: a
            # kept matrix much stiffer than the present one (a contact that has opened)
            # makes small increments far from the root
            unmeasured = (it == 0) & ~refreshed
            err_new = jnp.where((theta_new >= 1.0) | unmeasured, jnp.maximum(err_new, 1.0 + inc), err_new)
            # an increment of a kept matrix that grew (a contact that closed since the matrix
            # was formed) is not taken: the next iteration forms a new matrix (theta >= 1
            # asks for one) where the increments still shrank, as full Newton would. If the
            # matrix is from an earlier step, its first increment was not measured and may
            # have thrown the iterate far from the root already: start again from `x0`.
            grew = ~refreshed & (theta_new >= 1.0)
            x_new = jnp.where(grew[..., None], jnp.where((njac == 0)[..., None], x0, x), x - dx)
            refreshed = refreshed.astype(x.dtype)
            updated = jnp.stack([it + 1, err_new, inc, theta_new, njac + refreshed], -1)
            return jnp.where(on[..., None], x_new, x), jnp.where(on[..., None], updated, scalars), matrix, ref

        factor = kept.factor
        if turn is not None:  # turn the kept inverse from its position to this step's prediction
            factor = (rotate_matrix(factor[0], *rotation(kept.ref, predicted)),)
        scalars = jnp.array([0.0, jnp.inf, 0.0, 0.0, 0.0], x0.dtype)
        start = ((factor, kept.coord), predicted if turn is not None else kept.ref)
        x, scalars, matrix, ref = jax.lax.while_loop(cond, body, (x0, scalars, *start))
        njac = scalars[..., 4]
        kept = KeptMatrix(
            factor=matrix[0], coord=matrix[1], ref=ref, valid=jnp.maximum(kept.valid, njac > 0), kind=kept.kind
        )
        return x, NewtonResult(scalars[..., 1], scalars[..., 0], njac, kept)


def rotation(q_ref, q):
    r"""`(cos φ, sin φ)` of the least-squares rotation about the origin that takes the
    $(x, y)$ pairs of `q_ref` to those of `q`: $\varphi = \operatorname{atan2}(\sum
    p^0 \times p, \sum p^0 \cdot p)$ (2D Kabsch); the identity when that is undefined.
    The sums are fused trees (`sum_last`): once per step, where a reduction kernel
    costs more than the arithmetic."""
    x0, y0, x, y = q_ref[..., 0::2], q_ref[..., 1::2], q[..., 0::2], q[..., 1::2]
    cross, dot = sum_last(x0 * y - y0 * x), sum_last(x0 * x + y0 * y)
    norm = jnp.sqrt(cross * cross + dot * dot)
    ok = norm > 0
    safe = jnp.where(ok, norm, 1.0)
    return jnp.where(ok, dot / safe, 1.0), jnp.where(ok, cross / safe, 0.0)


def rotate_matrix(M, c, s):
    """$T M T^T$ for a kept inverse `M` (n x kn: k blocks side by side, each turned),
    $T$ rotating every consecutive `(x, y)` pair by `(c, s)`: the four entries of each
    2 x 2 tile combined elementwise, with no transposes."""
    n, w = M.shape
    A = M.reshape(n // 2, 2, w // 2, 2)
    m00, m01, m10, m11 = A[:, 0, :, 0], A[:, 0, :, 1], A[:, 1, :, 0], A[:, 1, :, 1]
    r00, r01, r10, r11 = c * m00 - s * m10, c * m01 - s * m11, s * m00 + c * m10, s * m01 + c * m11  # T M
    tile = [[c * r00 - s * r01, s * r00 + c * r01], [c * r10 - s * r11, s * r10 + c * r11]]  # (T M) T^T
    return jnp.stack([jnp.stack(row, axis=-1) for row in tile], axis=1).reshape(n, w)
