"""Private class means: one Riemannian mean per class, released jointly (PrivateMDM).

From a public start x0 every class point m_k^0 = x0; round t releases the clipped tangent
sums of every class at once, in orthonormal coordinates of T_{m_k} M
(``learning._tangent_frame``),

    S_k = sum_{i: y_i = k} clip_C(Log_{m_k}(x_i)) + xi_k,   xi_k ~ N(0, sigma^2 I_d),

and steps m_k <- Exp_{m_k}(P_C(S_k / n_k)): full-batch Riemannian gradient descent on
each class's Frechet function with unit step, the K classes' gradient sums one Gaussian
query; P_C projects onto the ball of radius C, where the clipped mean lies
(post-processing: it keeps a noisy step, or a step by a small noisy count, from throwing
the point far away).

The start may itself be released: ``reference`` (a ``pooled_mean`` release of all the
records, its own share of the budget) replaces the public start by a private mean of the
data, so that the classes' clipped steps start near their means whatever the data's
distance from the canonical point.

Privacy. Labels public (``private_labels=False``): neighbouring datasets differ in the
features of one record, its label kept; the class sizes n_k are public, one class's sum
moves by at most 2C and the others not at all, so the stacked query has l2 sensitivity 2C
and the classes compose in parallel (each class mean pays the whole budget once).
Labels private: replace-one on whole records (x, y); a record moving from class a to b
changes S_a and S_b by at most C each (sqrt(2) C < 2C): the stacked sums keep sensitivity
2C, and the class sizes are released first as noisy counts (l2 sensitivity sqrt(2): two
counts move by one), floored at 1, and used in place of n_k (no private count is read
unnoised). Accountant: Gaussian releases (the counts, then ``n_iter`` rounds of sums)
composed exactly in Gaussian DP, the multipliers calibrated from public shares of mu^2
(``share_noise_multipliers``) before any data value is read.
"""

from dataclasses import dataclass

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_finite_array
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning._tangent_frame import (
    clip_rows,
    coordinates,
    tangent_frame,
    tangent_vector,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.privacy import GaussianEvent, share_noise_multipliers
from geomstats_dp.privacy.stages import noisy_stage

ATOL = 1e-6  # tolerance of the check that the records lie on the space
COUNT_SHARE = 0.05  # of mu^2, spent on the noisy class counts when the labels are private
COUNT_SENSITIVITY = np.sqrt(2.0)  # l2: a record leaves one class and joins another


def class_mean_multipliers(epsilon, delta, n_iter, private_labels, share=1.0):
    """(count multiplier or None, sum multiplier per round) of a release taking ``share``
    of the mu^2 of an (epsilon, delta) budget, from public quantities."""
    count_share = COUNT_SHARE if private_labels else 0.0
    shares = [share * (1 - count_share) / n_iter] * n_iter
    if private_labels:
        shares = [share * count_share, *shares]
    multipliers = share_noise_multipliers(epsilon, delta, shares)
    if private_labels:
        return multipliers[0], multipliers[1]
    return None, multipliers[0]


def pooled_mean(space, start, n_samples, clip_norm, n_iter, multiplier, label):
    """The release of one private mean of all the records (one public class of size n):
    read ``pooled_point(release, points, rng)``."""
    return ClassMeansRelease(space, start, 1, clip_norm, n_iter, multiplier, None,
                             (n_samples,), label=label)


def reference_release(space, start, n_samples, epsilon, delta, clip_norm, n_iter, share,
                      label):
    """The ``pooled_mean`` release of a private reference point from the public ``start``,
    taking ``share`` of the mu^2 of an (epsilon, delta) budget (public quantities only)."""
    multiplier = class_mean_multipliers(epsilon, delta, n_iter, False, share)[1]
    return pooled_mean(space, start, n_samples, clip_norm, n_iter, multiplier, label)


def pooled_point(release, points, rng):
    """Run a ``pooled_mean`` release on ``points``; the released point (numpy)."""
    pooled = release.release((points, np.zeros(len(points), dtype=int)), None, rng)
    return to_numpy(pooled["centroids_"][0])


@dataclass(frozen=True)
class ClassMeansRelease(Mechanism):
    """Noisy per-class tangent steps from a public start (module docstring).

    Parameters
    ----------
    space : Manifold
    start : numpy.ndarray, shape=[*space.shape]
        The public start of every class.
    n_classes : int
    clip_norm : float
        C, in the Riemannian norm.
    n_iter : int
        Rounds (public).
    sum_multiplier : float
        z of one round: noise sigma = z 2C on the stacked sums.
    count_multiplier : float or None
        z of the counts (private labels: sigma = z sqrt(2)); None: labels public.
    class_sizes : tuple of int or None
        The public class sizes (labels public).
    label : str
        Prefix of the ledger events.
    reference : ClassMeansRelease or None
        A ``pooled_mean`` release whose point replaces ``start`` (None: ``start``).
    """

    space: object
    start: np.ndarray
    n_classes: int
    clip_norm: float
    n_iter: int
    sum_multiplier: float
    count_multiplier: float | None = None
    class_sizes: tuple | None = None
    label: str = "PrivateMDM"
    reference: "ClassMeansRelease | None" = None

    def events(self):
        events = [] if self.reference is None else list(self.reference.events())
        if self.count_multiplier is not None:
            events.append(GaussianEvent.from_noise(
                self.count_multiplier * COUNT_SENSITIVITY, COUNT_SENSITIVITY,
                label=f"{self.label}: class counts"))
        sensitivity = clipped_sum_sensitivity(self.clip_norm, 1)
        events.append(GaussianEvent.from_noise(
            self.sum_multiplier * sensitivity, sensitivity, n_steps=self.n_iter,
            label=f"{self.label}: class sums"))
        return tuple(events)

    def _sizes(self, codes, rng):
        """Noisy counts floored at 1 (private labels), else the public sizes."""
        if self.count_multiplier is None:
            return np.asarray(self.class_sizes, dtype=float)
        counts = np.bincount(codes, minlength=self.n_classes).astype(float)
        sigma = self.count_multiplier * COUNT_SENSITIVITY
        noisy = noisy_stage(counts, rng.normal(0.0, sigma, self.n_classes),
                            label=f"{self.label}: class counts", law="gaussian",
                            scale=sigma, sensitivity=COUNT_SENSITIVITY, dim=self.n_classes)
        return np.maximum(np.asarray(to_numpy(noisy), dtype=float), 1.0)

    def release(self, data, weights, rng):
        """Release the class means of ``data = (points, codes)`` (codes in
        [0, n_classes)), after checking that the points lie on the space; returns
        ``centroids_`` and the noise multipliers."""
        points, codes = data
        check_values(self.space, points, ATOL)
        start = (self.start if self.reference is None
                 else pooled_point(self.reference, points, rng))
        sizes = self._sizes(codes, rng)
        centroids = [start] * self.n_classes
        sigma = clipped_sum_sensitivity(self.clip_norm, 1,
                                        multiplier=self.sum_multiplier)
        dim = int(self.space.dim)
        for step in range(self.n_iter):
            frames = [tangent_frame(self.space, point) for point in centroids]
            sums = np.zeros((self.n_classes, dim))
            for k, frame in enumerate(frames):
                members = points[codes == k]
                if len(members):
                    rows = clip_rows(coordinates(self.space, frame, members), self.clip_norm)
                    sums[k] = rows.sum(axis=0)
            noise = rng.normal(0.0, sigma, sums.shape)
            noisy = np.asarray(to_numpy(noisy_stage(
                sums, noise, label=f"{self.label}: class sums", law="gaussian",
                scale=sigma, sensitivity=clipped_sum_sensitivity(self.clip_norm, 1), dim=sums.size)))
            steps = clip_rows(noisy / sizes[:, None], self.clip_norm)
            centroids = [
                to_numpy(self.space.metric.exp(tangent_vector(self.space, frame, steps[k]),
                                               to_backend(frame.base_point)))
                for k, frame in enumerate(frames)]
        centroids = np.stack(centroids)
        check_finite_array(centroids, "centroids_")
        return {
            "centroids_": to_backend(centroids),
            "noise_multiplier_": self.sum_multiplier,
            "noise_multipliers_": {
                "class_sums": self.sum_multiplier, "class_counts": self.count_multiplier,
                "reference": (None if self.reference is None
                              else self.reference.sum_multiplier)},
            "n_iter_": self.n_iter,
        }
