r"""Elastic forces of a chain of finite elements with element-level stiffness.

A beam of $n$ elements whose element $e$ owns the coordinate window
$q_e = q[s e : s e + w]$ (stride $s$, width $w$; neighbours share their node) has the
energy $U(q) = \sum_e U_e(q_e)$ and the force $Q = -\partial U/\partial q$.
Differentiating $Q$ again by forward mode over the whole coordinate vector (what a
Newton matrix `jacfwd` does) costs one pass per coordinate, each over every element.
Here the derivative of $Q$ is the assembled element stiffness instead,
$dQ = -\sum_e P_e^T K_e P_e\,dq$ with $K_e = \partial^2 U_e/\partial q_e^2$ (a `vmap` over
elements of a $w \times w$ Hessian), computed once per linearization point and
shared by all tangent directions. Derivatives with respect to the body's parameters
(stiffness, density, ...) still come from forward mode through $Q$, so any
parameter stays differentiable; the rule is linear in the tangents, so reverse mode
transposes it as usual. A body may compute the force values themselves by a faster
route of its own (`primal`, e.g. a layout that vectorizes better); the derivatives
still come from the energy.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero


def _is_zero(tangent) -> bool:
    leaves = jax.tree_util.tree_leaves(tangent, is_leaf=lambda x: isinstance(x, SymbolicZero))
    return all(isinstance(x, SymbolicZero) for x in leaves)


def _instantiate(tangent, primal):
    return jax.tree_util.tree_map(
        lambda t, p: jnp.zeros(jnp.shape(p), t.dtype) if isinstance(t, SymbolicZero) else t,
        tangent,
        primal,
        is_leaf=lambda x: isinstance(x, SymbolicZero),
    )


def _windows(q, n: int, stride: int, width: int):
    """The element windows `q[stride*e : stride*e + width]`, (n, width). When `width` is
    a multiple of `stride` (neighbours share whole nodes) they are built from slices,
    whose transpose (the assembly of element forces) is pads and adds: a gather's
    transpose is a scatter-add, a serial loop on CPU."""
    if width % stride:
        return q[stride * np.arange(n)[:, None] + np.arange(width)[None, :]]
    k = width // stride
    return jnp.concatenate([jnp.reshape(q[stride * j : stride * (j + n)], (n, stride)) for j in range(k)], axis=1)


def _assemble(F, nq: int, n: int, stride: int, width: int):
    """$\\sum_e P_e^T F_e$: element vectors `F` (n, width) added into a vector of size `nq`
    (the transpose of `_windows`)."""
    return jax.linear_transpose(lambda q: _windows(q, n, stride, width), jnp.zeros(nq, F.dtype))(F)[0]


@functools.cache
def _chain_force(element_energy, n: int, stride: int, width: int, element_hessian=None, primal=None):
    def force(body, q):
        energy = lambda q: jnp.sum(jax.vmap(element_energy, (None, 0))(body, _windows(q, n, stride, width)))
        return -jax.grad(energy)(q)

    # `primal` gives the values only: the rule below never differentiates it
    f = jax.custom_jvp(force if primal is None else primal)

    def jvp(primals, tangents):
        body, q = primals
        dbody, dq = tangents
        out = f(body, q)
        dout = jnp.zeros_like(out)
        if not isinstance(dq, SymbolicZero):
            qe = _windows(q, n, stride, width)
            if element_hessian is None:
                K = jax.vmap(jax.hessian(element_energy, argnums=1), (None, 0))(body, qe)
            else:
                K = element_hessian(body, qe)
            dF = jnp.einsum("eij,ej->ei", K, _windows(dq, n, stride, width))
            dout = dout - _assemble(dF, q.shape[0], n, stride, width)
        if not _is_zero(dbody):
            dout = dout + jax.jvp(lambda b: force(b, q), (body,), (_instantiate(dbody, body),))[1]
        return out, dout

    f.defjvp(jvp, symbolic_zeros=True)
    return f


def chain_elastic_force(element_energy, body, q, n: int, stride: int, width: int, element_hessian=None, primal=None):
    r"""$-\partial U/\partial q$ for $U = \sum_e$ `element_energy(body, q[stride*e : stride*e + width])`,
    $e = 0..n-1$, with the element-stiffness derivative described in the module
    docstring.

    **Arguments:** `element_energy`: a plain function `(body, q_e) -> energy` (not a
    bound method: `body` is passed explicitly so that its parameters are
    differentiated); `body`: a pytree of arrays; `q`: the body's coordinates;
    `n`, `stride`, `width`: static ints; `element_hessian`: optionally a plain function
    `(body, q_elements (n, width)) -> (n, width, width)` that returns the element
    Hessians more cheaply than `jax.hessian` of `element_energy` (the planar beam
    forms them from Gauss-point densities); it must equal that Hessian. `primal`:
    optionally a function `(body, q) -> force` that computes the same force values
    faster (the planar beam's column layout); only its values are used, never its
    derivatives, so it may carry rules (`custom_vmap`) that reverse mode cannot
    transpose.
    """
    return _chain_force(element_energy, n, stride, width, element_hessian, primal)(body, q)
