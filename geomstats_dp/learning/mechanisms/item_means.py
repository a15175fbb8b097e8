"""Private item means, the rank-0 model of matrix completion (``method="means"``).

User u, with k_u ratings x_uj clipped to [-h, h] (h the public half-width), contributes
the sums s_uj = x_uj / sqrt(k_u) and the counts n_uj = h / sqrt(k_u) over their rated
items; (S, N) is released with Gaussian noise of standard deviation sigma. Item j's mean
is b_j = h S_j / N_j, clipped to [-h, h], where the noisy count exceeds
``RELIABLE_COUNT`` sigma (0, the public offset, elsewhere). Post-processing, from the
release alone (``shrunk_item_means``): the reliable means are shrunk towards their
average by the positive-part James-Stein factor (James & Stein 1961; Efron & Morris 1973)

    f = max(0, 1 - (m - 3) mean_j(v_j) / sum_j (b_j - b_bar)^2),

over the m >= 4 reliable items, v_j = sigma^2 (h^2 + b_j^2) / N_j^2 the delta-method
variance of b_j, and the other items get b_bar. Each user completes their row with the
item means plus their own offset, shrunk on their own ratings
(``_local_completion.shrunk_offsets``): post-processing in the billboard model, which
gives each user's offset where the users differ and little where they do not.

Privacy. Adjacency: USER-LEVEL replace-one. The pair x_u = (s_u, n_u) has L2 norm at most
sqrt(2) h, and two users' pairs have a non-negative inner product (the counts' part, h^2
sum over common items of 1 / sqrt(k_u k_u'), bounds the sums' part in absolute value), so
|x_u - x_u'|^2 <= |x_u|^2 + |x_u'|^2 and (S, N) has sensitivity 2h (attained: the same
items rated h and -h). One Gaussian release at noise multiplier
``calibrate_gaussian(epsilon, delta, 1)``: a ``GaussianEvent``. With ``scale``, a private
quantile first tightens h (``rating_scale``: one more ``PureEvent``; the sensitivity 2h
then follows the released scale).
"""

import functools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from geomstats_dp.learning._local_completion import centred_ratings
from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    check_user_rows,
    gaussian_noise,
    user_blocks,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.clip_bound import AutoClip
from geomstats_dp.learning.mechanisms.rating_scale import scale_event, tightened
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian
from geomstats_dp.privacy.stages import noisy_stage

RELIABLE_COUNT = 3.0  # noise standard deviations a noisy count must exceed
MIN_SHRUNK_ITEMS = 4  # the James-Stein factor towards the average needs m >= 4


def mean_statistics(ratings, half_width):
    """(S, N) of a block of users: the sums of s_u and n_u (module docstring).

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings, NaN where missing (non-finite ones count as missing).
    half_width : float
        h.

    Returns
    -------
    statistic : numpy.ndarray, shape=[2 n_items]
    """
    observed = np.isfinite(ratings)
    scale = 1.0 / np.sqrt(np.maximum(observed.sum(axis=1), 1))[:, None]
    clipped = np.clip(np.where(observed, ratings, 0.0), -half_width, half_width)
    return np.concatenate([(clipped * scale).sum(axis=0),
                           (half_width * observed * scale).sum(axis=0)])


def noisy_sums(ratings, half_width, noise_std, rng, transform=None, **stage):
    """(S, N) with N(0, noise_std^2) noise on every coordinate (module docstring).

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings (or ratings ``transform`` centres), NaN where missing.
    half_width : float
        h.
    noise_std : float
    rng : numpy.random.Generator
    transform : callable, optional
        A per-user map applied to each block of rows (``user_blocks``).
    **stage
        ``label`` and ``sensitivity`` of the user-level stage.

    Returns
    -------
    sums, counts : numpy.ndarray, shape=[n_items]
        Released.
    """
    statistic = np.zeros(2 * ratings.shape[1])
    for _, block in user_blocks(ratings, transform):
        statistic += mean_statistics(block, half_width)
    released = noisy_stage(statistic, gaussian_noise(rng, noise_std, statistic.shape),
                           law="gaussian", scale=noise_std, dim=len(statistic),
                           adjacency="user_level", **stage)
    return np.split(released, 2)


def item_means(sums, counts, half_width, noise_std):
    """b_j = h S_j / N_j clipped to [-h, h] where N_j > ``RELIABLE_COUNT`` noise_std, else
    0, and whether each item is reliable (post-processing of the release).

    Returns
    -------
    means : numpy.ndarray, shape=[n_items]
    reliable : numpy.ndarray of bool, shape=[n_items]
    """
    reliable = counts > RELIABLE_COUNT * noise_std
    means = half_width * sums / np.where(reliable, counts, 1.0)
    return np.where(reliable, np.clip(means, -half_width, half_width), 0.0), reliable


def shrunk_item_means(sums, counts, half_width, noise_std):
    """The item means shrunk towards their average by the James-Stein factor (module
    docstring); the plain ``item_means`` where fewer than 4 items are reliable.

    Parameters
    ----------
    sums, counts : numpy.ndarray, shape=[n_items]
        The released (S, N).
    half_width, noise_std : float

    Returns
    -------
    means : numpy.ndarray, shape=[n_items]
    """
    means, reliable = item_means(sums, counts, half_width, noise_std)
    n_reliable = int(reliable.sum())
    if n_reliable < MIN_SHRUNK_ITEMS:
        return means
    values = means[reliable]
    variances = noise_std**2 * (half_width**2 + values**2) / counts[reliable]**2
    average = values.mean()
    spread = np.sum((values - average)**2)
    factor = max(0.0, 1.0 - (n_reliable - 3) * variances.mean() / max(spread, 1e-300))
    return np.where(reliable, average + factor * (means - average), average)


@dataclass(frozen=True)
class ItemMeansRelease(Mechanism):
    """The private item means, shrunk; users add their own shrunk offset (module doc).

    Parameters
    ----------
    n_samples : int
        The public number of users (rows).
    epsilon, delta : float
        The guarantee of the Gaussian release (the scale's epsilon on top).
    half_width : float
        h, the public half-width of the centred ratings.
    clip_norm : float
        The public clip norm of the estimator (reported; tightened with h where ``scale``
        is set, as DP-ALS's).
    rating_range : tuple of two floats or None
        Public (low, high) the ratings are clipped to, before the offset is subtracted.
    offset : float
        The public value subtracted from every rating.
    label : str
        The estimator's name, the start of the events' labels.
    scale : AutoClip or None
        A private quantile of the users' largest |centred rating| that tightens h first
        (``rating_scale``); None: h as given.
    """

    adjacency: ClassVar[str] = "user_level"

    n_samples: int
    epsilon: float
    delta: float
    half_width: float
    clip_norm: float
    rating_range: tuple | None = None
    offset: float = 0.0
    label: str = "PrivateMatrixCompletion"
    scale: AutoClip | None = None

    @functools.cached_property
    def noise_multiplier(self):
        """z of the one Gaussian release at (epsilon, delta)."""
        return calibrate_gaussian(self.epsilon, self.delta, 1)

    @property
    def sensitivity(self):
        """2h: (S, N), every item together (module docstring)."""
        return 2 * self.half_width

    @property
    def scale_label(self):
        return f"{self.label} item means: rating scale"

    def _means_label(self):
        return f"{self.label} item means: sums and counts"

    def events(self):
        if self.scale is not None:  # the sensitivity follows the released scale
            return (scale_event(self),
                    GaussianEvent(self.noise_multiplier, label=self._means_label()))
        return (GaussianEvent.from_noise(self.noise_multiplier * self.sensitivity,
                                         self.sensitivity, label=self._means_label()),)

    def release(self, data, weights, rng):
        check_user_rows(data, weights, self.n_samples, "means")
        transform = functools.partial(centred_ratings, rating_range=self.rating_range,
                                      offset=self.offset)
        spec = tightened(self, user_blocks(data, transform), rng)
        noise_std = spec.noise_multiplier * spec.sensitivity
        sums, counts = noisy_sums(data, spec.half_width, noise_std, rng, transform,
                                  label=self._means_label(), sensitivity=spec.sensitivity)
        means = shrunk_item_means(sums, counts, spec.half_width, noise_std)
        return {
            "estimate_": np.zeros((len(means), 0)),
            "item_offsets_": means,
            "item_means_": means,
            "user_offsets_": True,
            "noise_multiplier_": self.noise_multiplier,
            "noise_multipliers_": {"item means": self.noise_multiplier},
            "n_iter_": 1,
            "clip_norm_": self.clip_norm,
            "rating_scale_": spec.half_width,
            "regularization_": None,
        }
