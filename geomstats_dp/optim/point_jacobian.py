"""Exact per-sample gradients of losses that share one point: reverse over reverse mode.

For the values y(x) = (f(x; z_1), ..., f(x; z_k)) at one point x [*shape], the per-sample
Euclidean gradients are the rows of the Jacobian J [k, d], d = prod(shape). One reverse
pass gives u -> J^T u for a cotangent u [k]; that map is linear in u, and one reverse pass
through it along a direction v [*shape] gives J v [k]. The d columns of J then cost one
forward and one reverse pass of the loss at ONE point, and d reverse passes of that
graph: operations on the point alone (an inverse, a determinant) run once, where
differentiating the sum of the losses at k replicated points runs them k times. It needs
only the reverse mode (autograd has no forward mode for ``inv`` and other linear algebra).
"""

import math
import warnings

import geomstats.backend as gs

from geomstats_dp.optim.losses import AUTODIFF_BACKENDS, backend_name


def point_jacobian(evaluate, point):
    """Per-sample Euclidean gradients of ``evaluate`` at one point.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(point [*shape]) -> values [k]``, written with ``geomstats.backend``.
    point : array-like, shape=[*shape]

    Returns
    -------
    gradients : array-like, shape=[k, *shape]
        Row i is the gradient of ``evaluate(.)[i]`` at ``point``.
    """
    name = backend_name()
    if name not in AUTODIFF_BACKENDS:
        raise ValueError(
            f"point_jacobian needs the {' or '.join(AUTODIFF_BACKENDS)} backend "
            f"(GEOMSTATS_BACKEND), the active one is {name!r}"
        )
    shape = tuple(point.shape)
    units = gs.reshape(gs.eye(math.prod(shape)), (-1,) + shape)
    columns = (_autograd_columns if name == "autograd" else _torch_columns)(
        evaluate, point, units)
    return gs.reshape(gs.stack(columns, axis=-1), (-1,) + shape)


def _autograd_columns(evaluate, point, units):
    from autograd.differential_operators import make_jvp_reversemode

    with warnings.catch_warnings():  # a loss constant in the point: its Jacobian is 0
        warnings.filterwarnings("ignore", "Output seems independent of input")
        jvp = make_jvp_reversemode(evaluate)(point)
        return [jvp(unit) for unit in units]


def _torch_columns(evaluate, point, units):
    import torch

    at = point.detach().requires_grad_(True)
    with torch.enable_grad(), warnings.catch_warnings():
        # an operation without a batching rule is looped over the directions: same values
        warnings.filterwarnings("ignore", "There is a performance drop")
        values = evaluate(at)
        cotangent = torch.zeros_like(values, requires_grad=True)
        vjp = _grad(values, at, cotangent, create_graph=True)
        columns = _grad(vjp, cotangent, units, is_grads_batched=True)  # all directions
    return list(columns.detach())


def _grad(output, wrt, direction, **options):
    """d<output, direction>/d wrt, zero where ``output`` does not depend on ``wrt``
    (a batch of them for a batch of directions, ``is_grads_batched``)."""
    import torch

    if not output.requires_grad:
        batch = direction.shape[:1] if options.get("is_grads_batched") else ()
        return torch.zeros(batch + wrt.shape, dtype=wrt.dtype)
    (grad,) = torch.autograd.grad(output, wrt, direction, allow_unused=True,
                                  materialize_grads=True, **options)
    return grad

