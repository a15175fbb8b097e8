"""Exact per-sample gradients of losses that share one point: reverse over reverse mode.

For the values y(x) = (f(x; z_1), ..., f(x; z_k)) at one point x [*shape], the per-sample
Euclidean gradients are the rows of the Jacobian J [k, d], d = prod(shape). One reverse
pass gives u -> J^T u for a cotangent u [k]; that map is linear in u, and one reverse pass
through it along a direction v [*shape] gives J v [k]. The d columns of J then cost one
forward and one reverse pass of the loss at ONE point, and d reverse passes of that
graph: operations on the point alone (an inverse, a determinant) run once, where
differentiating the sum of the losses at k replicated points runs them k times. It needs
only the reverse mode (autograd has no forward mode for ``inv`` and other linear algebra).

``copies_jacobian`` (pytorch) takes the d directions at once from d copies of the point,
for a loss that broadcasts the copies against the records (values [d, k]): copy j carries
the tangent e_j, so that J^T is one forward pass in forward mode: it saves the d passes'
overhead, not their arithmetic. On autograd the same trick, one more reverse pass with the
cotangents e_j, pays on small batches only (its arrays are d times larger), and is not used
(timings of both: docs/benchmarks/optimizers.md, "Plain-function losses"): there
``CallableLoss`` takes the columns by the complex step where the loss's code allows it
(``optim.complex_step``, checked against ``point_jacobian``), and by ``point_jacobian``
where it does not. On
pytorch too, the complex step on the copies (d <= 4) comes first, checked against
``copies_jacobian``, which remains the route of larger points and of non-analytic code.
"""

import math
import warnings

import geomstats.backend as gs

from geomstats_dp.optim.losses import AUTODIFF_BACKENDS, backend_name

FORWARD_MODE_BACKENDS = ("pytorch",)  # forward mode through linear algebra


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
    name, shape, units = _directions(point, "point_jacobian")
    columns = (_autograd_columns if name == "autograd" else _torch_columns)(
        evaluate, point, units)
    return gs.reshape(gs.stack(columns, axis=-1), (-1,) + shape)


def copies_jacobian(evaluate, point):
    """Per-sample Euclidean gradients at one point, from d copies of it in one forward
    pass (pytorch's forward mode).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(copies [d, 1, *shape]) -> values [d, k]``, row j the values at
        ``copies[j]`` (the copies broadcast against the k records), written with
        ``geomstats.backend``.
    point : array-like, shape=[*shape]
        d = prod(shape).

    Returns
    -------
    gradients : array-like, shape=[k, *shape]
        Row i is the gradient of ``evaluate(.)[j, i]`` at ``point`` (any j).
    """
    _, shape, units = _directions(point, "copies_jacobian", FORWARD_MODE_BACKENDS)
    from torch.autograd import forward_ad

    copies = gs.repeat(gs.expand_dims(point.detach(), 0), units.shape[0], axis=0)
    with forward_ad.dual_level(), warnings.catch_warnings():
        # torch's first dual tensor imports modules that warn about their own jit.script
        warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated")
        values = evaluate(forward_ad.make_dual(copies[:, None], units[:, None]))
        tangents = forward_ad.unpack_dual(values).tangent  # [d, k]; None: constant
    if tangents is None:
        return gs.zeros((int(values.shape[1]),) + shape)
    return gs.reshape(gs.transpose(tangents.detach()), (-1,) + shape)


def _directions(point, caller, backends=AUTODIFF_BACKENDS):
    """The backend's name, the point's shape and its d unit directions [d, *shape]."""
    name = backend_name()
    if name not in backends:
        raise ValueError(
            f"{caller} needs the {' or '.join(backends)} backend "
            f"(GEOMSTATS_BACKEND), the active one is {name!r}"
        )
    shape = tuple(point.shape)
    return name, shape, gs.reshape(gs.eye(math.prod(shape)), (-1,) + shape)


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

