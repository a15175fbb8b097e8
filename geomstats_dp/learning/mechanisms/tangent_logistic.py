"""The tangent-space classifier's release: a reference point, then a linear model on the
clipped orthonormal tangent rows at it, as one mechanism.

Privacy. Adjacency: replace-one on whole records (point and label). The reference point,
unless public, is ``class_means.pooled_mean`` (the records as one public class of size n:
sensitivity 2C' of each round's tangent sum, C' = ``reference.clip_norm``); the rows at it
are clipped to C and scaled into the unit ball, a function of one record each given the
released point, and the linear model is ``logistic.LogisticRelease`` (sensitivity 2G per
step) or ``logistic_objective.LogisticObjectiveRelease`` (objective perturbation).
Accountant: the reference rounds and the gradient steps are Gaussian releases composed
exactly in Gaussian DP, their multipliers set from public shares of the mu^2 of the fit's
(epsilon, delta) before any data value is read; objective perturbation's
(epsilon, delta) event composes with the reference rounds by the package's accountant
(basic composition at the rest of delta).
"""

from dataclasses import dataclass

import numpy as np

from geomstats_dp.learning._data import check_values
from geomstats_dp.learning._tangent_frame import clip_rows, coordinates, tangent_frame
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.class_means import (
    ATOL,
    ClassMeansRelease,
    pooled_point,
)


def tangent_rows(space, frame, clip_norm, points):
    """Coordinates of Log_p(x) in the frame's orthonormal basis, clipped to norm
    ``clip_norm``, shape=[n_samples, space.dim] (numpy)."""
    return clip_rows(coordinates(space, frame, points), clip_norm)


@dataclass(frozen=True)
class TangentLogisticRelease(Mechanism):
    """A private (or public) reference point, then a private logistic model on the
    tangent rows at it (module docstring).

    Parameters
    ----------
    space : Manifold
    clip_norm : float
        C, the rows' clip radius (the rows are divided by it).
    logistic : LogisticRelease or LogisticObjectiveRelease
    reference : ClassMeansRelease or None
        The pooled-mean release of the reference point; None: ``base_point``.
    base_point : numpy.ndarray or None, shape=[*space.shape]
        The public reference point when ``reference`` is None.
    """

    space: object
    clip_norm: float
    logistic: Mechanism
    reference: ClassMeansRelease | None = None
    base_point: np.ndarray | None = None

    def events(self):
        early = () if self.reference is None else self.reference.events()
        return (*early, *self.logistic.events())

    def release(self, data, weights, rng):
        """Release on ``data = (points, codes)``; returns ``base_point_``, ``coef_``,
        ``intercept_`` and the multipliers."""
        points, codes = data
        check_values(self.space, points, ATOL)
        if self.reference is None:
            point = self.base_point
        else:
            point = pooled_point(self.reference, points, rng)
        frame = tangent_frame(self.space, point)
        rows = tangent_rows(self.space, frame, self.clip_norm, points) / self.clip_norm
        fitted = self.logistic.release((rows, codes), None, rng)
        fitted["base_point_"] = point
        if self.reference is not None:
            fitted["noise_multipliers_"] = {"reference": self.reference.sum_multiplier,
                                            "model": fitted["noise_multiplier_"]}
        return fitted
