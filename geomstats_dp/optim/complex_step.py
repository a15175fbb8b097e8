"""Per-sample gradients at one point by the complex step, and the check that allows it.

For a loss f written with operations that extend analytically to complex arguments
(sums, products, quotients, powers, ``inv``, ``det``, ``log``, ``exp``, ``einsum``),
f(x + i h v) = f(x) + i h J v + O(h^2) along a real direction v, so that
Im f(x + i h v) / h = J v up to a relative O(h^2) (Squire and Trapp 1998; Martins,
Sturdza and Alonso 2003). No difference of two values is taken: nothing cancels, and with
h = ``STEP`` = 1e-30 the result is J v to rounding. The d = prod(shape) columns of the
Jacobian J [k, d] of the values at one point cost d complex evaluations of the loss on
the batch, or one on d copies of the point for a loss that broadcasts them; on the
autograd backend these are plain numpy calls, without the tracing that reverse over
reverse mode (``point_jacobian``) pays on every pass, and on pytorch plain complex128
tensor calls (a float64 point plus the imaginary steps), without the dual tensors of
forward mode (``copies_jacobian``).

Where the code is not analytic (``abs``, ``conj``, real parts and casts to real, ``eigh``
and the SPD maps built on it, which assume a Hermitian matrix) the imaginary part is not
J v. ``complex_step_matches`` therefore accepts the complex step only if it runs without
an exception or a warning (numpy's and pytorch's "casting complex values discards the
imaginary part" included), returns complex values, and gives a reference Jacobian to
``CHECK_RTOL``. It sees only the branches that its inputs take: numpy orders complex
numbers by their real parts first, so that ``where``, comparisons and ``maximum`` branch
as on the real point (pytorch raises on them, and the check fails), but code that is
non-analytic only on a branch other inputs take is not caught.
"""

import contextlib
import math
import warnings

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import as_numpy

STEP = 1e-30  # the imaginary step h
CHECK_RTOL = 1e-9  # agreement with the reference Jacobian that admits the complex step
# pytorch's counterpart of numpy's ComplexWarning
TORCH_CAST_WARNING = "Casting complex values to real discards the imaginary part"


def complex_step_jacobian(evaluate, point, copies=False):
    """Per-sample Euclidean gradients at one point from the imaginary parts of values.

    Parameters
    ----------
    evaluate : callable
        Written with ``geomstats.backend``; ``evaluate(point [*shape]) -> values [k]``,
        or, with ``copies``, ``evaluate(copies [d, 1, *shape]) -> values [d, k]`` (row j
        the values at ``copies[j]``).
    point : array-like, shape=[*shape]
        A real point; d = prod(shape).
    copies : bool
        Whether ``evaluate`` takes the d perturbed points in one call.

    Returns
    -------
    gradients : array-like, shape=[k, *shape]
        Row i is the gradient of the i-th value at ``point``.
    """
    shape = tuple(point.shape)
    steps = 1j * STEP * gs.reshape(gs.eye(math.prod(shape)), (-1,) + shape)  # [d, *shape]
    if copies:
        columns = gs.imag(evaluate(gs.expand_dims(point + steps, 1)))  # [d, k]
    else:
        columns = gs.stack([gs.imag(evaluate(point + step)) for step in steps])
    return gs.reshape(gs.transpose(columns / STEP), (-1,) + shape)


def complex_step_matches(evaluate, point, reference, copies=False):
    """Whether the complex step of ``evaluate`` at ``point`` can stand for ``reference``.

    Parameters
    ----------
    evaluate, point, copies
        As for ``complex_step_jacobian``.
    reference : numpy.ndarray, shape=[k, *shape]
        The Jacobian by another exact method (``point_jacobian``).

    Returns
    -------
    matches : bool
        True if ``evaluate`` takes the complex points without an exception or a warning
        (none is shown), returns complex values, and its complex-step Jacobian equals
        ``reference`` to ``CHECK_RTOL`` (absolute tolerance ``CHECK_RTOL`` times the
        largest entry of ``reference``, which must have a finite entry).
    """

    def complex_values(points):
        values = evaluate(points)
        if not gs.is_complex(values):
            raise TypeError("the loss returned real values for complex points")
        return values

    finite = np.isfinite(reference)
    if not finite.any():
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning is a failure, and is not shown
            derived = complex_step_jacobian(complex_values, point, copies)
    except Exception:  # noqa: BLE001 - not complex-analytic: another route is used
        return False
    derived = as_numpy(derived)
    return derived.shape == reference.shape and bool(np.allclose(
        derived, reference, rtol=CHECK_RTOL, equal_nan=True,
        atol=CHECK_RTOL * np.abs(reference[finite]).max()))


@contextlib.contextmanager
def complex_warnings_silenced():
    """Hide what complex calls on data warn of, and only that: a cast to real discarding
    the imaginary part (numpy's ComplexWarning, pytorch's UserWarning) and numpy's
    floating-point warnings."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.filterwarnings("ignore", category=np.exceptions.ComplexWarning)
        warnings.filterwarnings("ignore", TORCH_CAST_WARNING)
        yield
