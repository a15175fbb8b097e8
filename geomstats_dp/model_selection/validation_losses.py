"""Per-record validation losses of a fitted estimator: what a private score averages.

Each estimator of the library has one loss per record of held-out data, computed from its
released quantities only (post-processing of the release): the squared distance to the
released mean, the estimator's own per-sample loss at its released point, the
reconstruction error of the released components, a user's squared error on their own
observed ratings, the squared distance of a private prediction to its target. Values may be
non-finite; ``private_score`` clips them, so no value of the data raises.
"""

import math

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from sklearn.base import ClassifierMixin

from geomstats_dp._backend import quiet_numerics, to_backend, to_numpy
from geomstats_dp.learning import (
    PrivateERM,
    PrivateMatrixCompletion,
    PrivatePCA,
    PrivateStructuredPrediction,
)
from geomstats_dp.optim import HuberDistanceLoss, PairedSamples, SquaredDistanceLoss


def pca_losses(estimator, X, y=None):
    """|x - mean|^2 - |W^T (x - mean)|^2: the squared reconstruction error of each row
    (non-finite for a non-finite row, which ``fit`` zeroes and ``transform`` refuses)."""
    rows = np.asarray(X, dtype=np.float64) - to_numpy(estimator.mean_)
    projected = rows @ to_numpy(estimator.components_).T
    return (rows**2).sum(axis=1) - (projected**2).sum(axis=1)


def matrix_completion_losses(estimator, X, y=None):
    """Mean squared error of each user's completed row on their observed ratings (0 if none)."""
    ratings = np.asarray(X, dtype=np.float64)
    observed = ~np.isnan(ratings)
    errors = np.where(observed, estimator.predict(ratings) - ratings, 0.0) ** 2
    return errors.sum(axis=1) / np.maximum(observed.sum(axis=1), 1)


def structured_prediction_losses(estimator, X, y):
    """Squared distance of each private prediction to its target (``predict`` charges)."""
    if y is None:
        raise ValueError("y must hold the targets of X for a PrivateStructuredPrediction")
    predictions = estimator.predict(X)
    return to_numpy(estimator.space.metric.squared_dist(predictions, to_backend(to_numpy(y))))


def classification_losses(estimator, X, y):
    """0-1 loss of each prediction of a private classifier (PrivateMDM, ...)."""
    if y is None:
        raise ValueError("y must hold the labels of X for a classifier")
    return (np.asarray(estimator.predict(X)) != np.asarray(y)).astype(np.float64)


def point_losses(estimator, X, y=None):
    """The estimator's per-sample loss at its released point ``estimate_`` (PrivateERM,
    PrivateFrechetMean: d^2 / 2, PriRFed)."""
    data = to_backend(to_numpy(X))
    if y is not None:
        data = PairedSamples(data, to_backend(to_numpy(y)))
    return to_numpy(estimator._make_loss().values(estimator.estimate_, data))


LOSSES = (  # the first class that matches wins: subclasses before their bases
    (PrivatePCA, pca_losses),
    (PrivateMatrixCompletion, matrix_completion_losses),
    (PrivateStructuredPrediction, structured_prediction_losses),
    (PrivateERM, point_losses),
    (ClassifierMixin, classification_losses),
)


def record_shapes(estimator):
    """(shape of one record of X, of y) a fitted estimator's losses take; None: any.

    From public attributes only: the number of features seen in fit, or the space of a
    squared-distance loss (a user's loss fixes no shape).
    """
    if isinstance(estimator, (PrivatePCA, PrivateMatrixCompletion)):
        return (estimator.n_features_in_,), None
    if isinstance(estimator, PrivateStructuredPrediction):
        return (estimator.n_features_in_,), tuple(estimator.space.shape)
    if isinstance(estimator, ClassifierMixin) and hasattr(estimator, "space"):
        return tuple(estimator.space.shape), ()
    loss = estimator._make_loss() if hasattr(estimator, "_make_loss") else None
    if isinstance(loss, SquaredDistanceLoss):
        return tuple(loss.space.shape), None
    return None, None


def record_losses(estimator, X, y=None):
    """One loss per record of (X, y) for a fitted estimator of the library.

    Parameters
    ----------
    estimator : PrivateFrechetMean, PrivateERM, PrivatePCA, PrivateMatrixCompletion,
        PrivateStructuredPrediction, PriRFed or a private classifier (0-1 loss)
        Fitted.
    X : array-like, shape=[n_samples, ...]
    y : array-like, shape=[n_samples, ...], optional

    Returns
    -------
    losses : numpy.ndarray, shape=[n_samples]
        Possibly non-finite.
    """
    losses = next((losses for kind, losses in LOSSES if isinstance(estimator, kind)), None)
    if losses is None and hasattr(estimator, "estimate_") and hasattr(estimator, "_make_loss"):
        losses = point_losses  # PriRFed
    if losses is not None:
        with quiet_numerics():  # a log of a record at the release may warn: data dependent
            return np.asarray(losses(estimator, X, y), dtype=np.float64).reshape(-1)
    raise TypeError(
        "estimator must be an estimator of geomstats_dp (PrivateFrechetMean, PrivateERM, "
        f"PrivatePCA, PrivateMatrixCompletion, PrivateStructuredPrediction, PriRFed), got "
        f"{type(estimator).__name__}"
    )


def default_loss_bound(estimator):
    """The bound B of the per-record validation loss that the space gives, or None.

    From public quantities only (the estimator's class, space and loss): on a sphere,
    whose geodesic distance is at most pi, the squared distance of a prediction to its
    target is at most pi^2 (PrivateStructuredPrediction), the loss d^2 / 2 at most
    pi^2 / 2 (PrivateFrechetMean; PrivateERM and PriRFed with ``SquaredDistanceLoss``)
    and the Huber loss of radius r at most h_r(pi); a classifier's 0-1 loss at most 1.
    None elsewhere (a non-compact space, PCA's reconstruction error and matrix
    completion's squared error on unbounded rows, a user's loss): give ``loss_bound``.

    Parameters
    ----------
    estimator : estimator
        Unfitted; nothing but its parameters is read.

    Returns
    -------
    bound : float or None
    """
    if isinstance(estimator, ClassifierMixin):
        return 1.0
    if isinstance(estimator, (PrivatePCA, PrivateMatrixCompletion)):
        return None
    if isinstance(estimator, PrivateStructuredPrediction):
        return math.pi**2 if isinstance(estimator.space, Hypersphere) else None
    loss = estimator._make_loss() if hasattr(estimator, "_make_loss") else None
    if loss is None or not isinstance(loss.space, Hypersphere):
        return None
    if type(loss) is SquaredDistanceLoss:
        return math.pi**2 / 2
    if type(loss) is HuberDistanceLoss:
        radius = min(loss.radius, math.pi)
        return radius * math.pi - radius**2 / 2
    return None
