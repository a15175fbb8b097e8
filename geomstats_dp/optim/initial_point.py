"""Data-independent starting points: a canonical point of each supported space."""

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.matrices import Matrices
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.geometry.stiefel import Stiefel
from geomstats.geometry.symmetric_matrices import SymmetricMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_finite_array


def _first_axis_point(space):
    """e_0 = (1, 0, ..., 0): the pole of the sphere, the apex of the hyperboloid."""
    point = np.zeros(space.shape)
    point[0] = 1.0
    return point


def _first_columns(space):
    """[I_p; 0]: the first p canonical vectors as a frame."""
    return np.eye(space.n, space.p)


def _first_coordinates_projector(space):
    """diag(1, ..., 1, 0, ..., 0): projector onto the first p coordinates."""
    return np.diag((np.arange(space.n) < space.p).astype(float))


def _zeros(space):
    """The origin (Poincare ball, Euclidean and matrix spaces)."""
    return np.zeros(space.shape)


_CANONICAL = (
    (SPDMatrices, lambda space: np.eye(space.n)),
    (Hypersphere, _first_axis_point),
    (Hyperboloid, _first_axis_point),
    (PoincareBall, _zeros),
    (Stiefel, _first_columns),
    (Grassmannian, _first_coordinates_projector),
    (Euclidean, _zeros),
    (SymmetricMatrices, _zeros),
    (Matrices, _zeros),
)


def canonical_point(space):
    """The canonical point of ``space``: identity (SPD), e_0 (sphere, hyperboloid),
    0 (Poincare ball, Euclidean and matrix spaces), [I_p; 0] (Stiefel), the projector
    onto the first p coordinates (Grassmannian).

    Parameters
    ----------
    space : Manifold

    Returns
    -------
    point : array-like, shape=[*space.shape]

    Raises
    ------
    ValueError
        For a space without a canonical point: pass ``init_point`` instead.
    """
    for space_class, make in _CANONICAL:
        if isinstance(space, space_class):
            point = to_backend(make(space))
            if point.shape != tuple(space.shape) or not bool(space.belongs(point)):
                raise ValueError(
                    f"the canonical point of {type(space).__name__} does not fit its "
                    f"coordinates (shape {tuple(space.shape)}); pass init_point"
                )
            return point
    supported = ", ".join(space_class.__name__ for space_class, _ in _CANONICAL)
    raise ValueError(
        f"no canonical initial point for {type(space).__name__} (known: {supported}); "
        "pass a data-independent init_point"
    )


def check_init_point(space, init_point, atol=1e-6, name="init_point"):
    """Return the initial point as a backend array: ``init_point`` checked, or canonical.

    The one check of a public start (``init_point``, the ``center`` of a Frechet mean)
    shared by every method, run before the budget: a start off the space would be
    released off the space by the one-step tangent releases.

    Parameters
    ----------
    space : Manifold
    init_point : array-like, shape=[*space.shape] or None
        Must not be derived from the data (the caller's responsibility).
    atol : float
        Tolerance of the membership check.
    name : str
        The argument's name, for the messages.

    Returns
    -------
    point : array-like, shape=[*space.shape]

    Raises
    ------
    ValueError
        A wrong shape, a non-finite entry (its index named) or a point off the space.
    """
    if init_point is None:
        return canonical_point(space)
    values = to_numpy(init_point)
    if values.shape != tuple(space.shape):
        raise ValueError(
            f"{name} must have shape {tuple(space.shape)}, got {values.shape}"
        )
    check_finite_array(values, name)
    point = to_backend(values)
    if not bool(space.belongs(point, atol=atol)):
        raise ValueError(f"{name} is not on {type(space).__name__} (atol={atol})")
    return point
