"""Private Lloyd iterations on a manifold (``PrivateKMeans``; Su et al. 2016's DP k-means
carried to the tangent spaces at the centres).

Iteration t assigns every record to its nearest current centre m_j (geodesic distance)
and releases, per cluster, the noisy count and the noisy sum of the clipped log-maps

    c_j = |{i : a(i) = j}| + N(0, sigma_c^2),
    s_j = sum_{a(i) = j} clip_C(Log_{m_j}(z_i)) + xi_j,   xi_j ~ N_{m_j}(0, sigma_s^2),

then moves each centre to m_j <- Exp_{m_j}(clip_C(s_j / c_j)) (post-processing; the true
tangent mean has norm at most C). A cluster whose noisy count is below max(1, sigma_c)
is taken as empty and its centre re-seeded at distance C / 2 from the centre of the
largest noisy count, in a random direction (post-processing too: Lloyd's usual repair of
an empty cluster, on released quantities only). The centres the records are assigned to
are released, so each iteration's queries are those of fixed public centres.

Privacy. Adjacency: replace-one. A replaced record leaves one cluster and joins one: the
count vector moves by sqrt(2) in l2; the sums, stacked over the clusters and measured in
the Riemannian norms at their centres, by at most 2C (C sqrt(2) across two clusters, 2C
within one). Accountant: the counts and the sums of the ``n_iter`` iterations (and the
``init="private"`` base point, ``mechanisms.tangent_mean``: sensitivity 2C/n) are
Gaussian releases composed exactly in Gaussian DP, their multipliers calibrated by
``share_noise_multipliers`` before any data value is read. The shares of mu^2: the base
point 1/(n_iter + 1) of it; within an iteration the counts 1/(1 + sqrt(2 d)), which
balances the two errors of a centre's step (``share_of_counts``).
"""

import math
from dataclasses import dataclass
from typing import Any

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning._data import check_values
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.tangent_mean import (
    mean_steps_event,
    noisy_mean_steps,
)
from geomstats_dp.optim import canonical_point, clip_tangent_vectors
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.privacy import GaussianEvent, share_noise_multipliers
from geomstats_dp.privacy.stages import noisy_stage

ATOL = 1e-6  # tolerance of the check that the records lie on the space
COUNT_SENSITIVITY = math.sqrt(2.0)
INIT_RADIUS_RATIO = 0.5  # initial centres at this times C from the (private) base point


def share_of_counts(dim):
    """The counts' share of an iteration's mu^2: 1 / (1 + sqrt(2 d)).

    A centre's step s_j / c_j errs by about sigma_s sqrt(d) / c_j through the sums and by
    |s_j / c_j| sigma_c / c_j <= C sigma_c / c_j through the count; with sensitivities 2C
    and sqrt(2) the sum of their squares is least when mu_c^2 / mu_s^2 = sqrt(2) / (2 sqrt(d)).
    """
    return 1.0 / (1.0 + math.sqrt(2.0 * dim))


def lloyd_multipliers(epsilon, delta, n_iter, dim, private_init):
    """Noise multipliers (base point or None, counts, sums) of a private Lloyd run.

    Parameters
    ----------
    epsilon, delta : float
    n_iter : int
    dim : int
        The manifold's dimension.
    private_init : bool
        Whether a private base point takes 1 / (n_iter + 1) of mu^2.

    Returns
    -------
    multipliers : tuple of (float or None, float, float)
    """
    init_share = 1.0 / (n_iter + 1) if private_init else 0.0
    per_iteration = (1.0 - init_share) / n_iter
    counts = share_of_counts(dim)
    shares = [per_iteration * counts, per_iteration * (1 - counts)]
    if private_init:
        shares.insert(0, init_share)
    multipliers = share_noise_multipliers(epsilon, delta, shares)
    return (multipliers[0] if private_init else None, *multipliers[-2:])


def nearest_centres(space, points, centres):
    """Index of the nearest centre of each point and the distances, numpy [n] and [n, k]."""
    distances = np.stack([to_numpy(space.metric.dist(points, centre)) for centre in centres],
                         axis=1)
    return np.argmin(distances, axis=1), distances


def centres_around(space, base, n_clusters, radius, sampler, rng):
    """``n_clusters`` points at distance ``radius`` from ``base`` in directions drawn from
    the tangent Gaussian at it (public randomness), shape=[n_clusters, *space.shape]."""
    bases = gs.stack([base] * n_clusters)
    directions = sampler.sample(bases, sigma=1.0, random_state=rng)
    scale = radius / space.metric.norm(directions, bases)
    return space.metric.exp(gs.einsum("k,k...->k...", scale, directions), bases)


@dataclass(frozen=True, eq=False)
class LloydRelease(Mechanism):
    """Private Lloyd iterations (module docstring): adjacency replace-one; sensitivities
    sqrt(2) (counts), 2C (clipped tangent sums), 2C/n (private base point); exact Gaussian
    DP composition.

    Parameters
    ----------
    space : Manifold
    n_samples : int
        The public number of records.
    n_clusters : int
    n_iter : int
        Public number of iterations.
    clip_norm : float
        C.
    init : {"private", "random"} or numpy.ndarray, shape=[n_clusters, *space.shape]
        Public initial centres; "random": ``n_clusters`` centres at distance C / 2 from
        the canonical point in random directions (``centres_around``); "private": the
        same around a private base point (the first multiplier).
    multipliers : tuple of float
        (init or None, counts, sums): ``lloyd_multipliers``.
    noise_method : str
        ``TangentGaussian`` method of the tangent noise.
    label : str
        Prefix of the ledger labels.
    """

    space: Any
    n_samples: int
    n_clusters: int
    n_iter: int
    clip_norm: float
    init: Any
    multipliers: tuple
    noise_method: str = "transport"
    label: str = "PrivateKMeans"

    @property
    def count_event(self):
        z = self.multipliers[1]
        return GaussianEvent.from_noise(z * COUNT_SENSITIVITY, COUNT_SENSITIVITY,
                                        n_steps=self.n_iter, label=f"{self.label}: counts")

    @property
    def sum_event(self):
        z, sensitivity = (self.multipliers[2],
                          clipped_sum_sensitivity(self.clip_norm, 1))
        return GaussianEvent.from_noise(z * sensitivity, sensitivity, n_steps=self.n_iter,
                                        label=f"{self.label}: tangent sums")

    @property
    def private_init(self):
        return isinstance(self.init, str) and self.init == "private"

    @property
    def init_event(self):
        if not self.private_init:
            return None
        return mean_steps_event(self.multipliers[0], self.clip_norm, self.n_samples, 1,
                                f"{self.label}: base point")

    def events(self):
        first = () if self.init_event is None else (self.init_event,)
        return (*first, self.count_event, self.sum_event)

    def release(self, data, weights, rng):
        space = self.space
        check_values(space, data, ATOL, "X")
        points = to_backend(data)
        sampler = TangentGaussian(space, self.noise_method, validate=False)
        centres = self._initial_centres(points, sampler, rng)
        counts = None
        for _ in range(self.n_iter):
            labels, _ = nearest_centres(space, points, centres)
            counts = self._noisy_counts(labels, rng)
            sums = self._noisy_sums(points, labels, centres, sampler, rng)
            centres = self._update(centres, counts, sums, sampler, rng)
        return {
            "cluster_centers_": centres,
            "cluster_sizes_": counts,
            "n_iter_": self.n_iter,
            "noise_multipliers_": dict(zip(("base point", "counts", "tangent sums"),
                                           self.multipliers, strict=True)),
        }

    def _update(self, centres, counts, sums, sampler, rng):
        """The centres moved by their noisy tangent means; those of (noisily) empty
        clusters re-seeded around the largest one's (post-processing)."""
        space = self.space
        steps = sums / to_backend(np.maximum(counts, 1.0)).reshape(
            (-1,) + (1,) * len(space.shape))
        steps = clip_tangent_vectors(space.metric, steps, centres, self.clip_norm)
        moved = space.metric.exp(steps, centres)
        largest = moved[int(np.argmax(counts))]
        # drawn at every iteration, used or not: the draws do not depend on the counts
        seeds = centres_around(space, largest, self.n_clusters,
                               INIT_RADIUS_RATIO * self.clip_norm, sampler, rng)
        empty = counts < max(1.0, self.count_event.noise_std)
        mask = empty.reshape((-1,) + (1,) * len(space.shape))
        return to_backend(np.where(mask, to_numpy(seeds), to_numpy(moved)))

    def _initial_centres(self, points, sampler, rng):
        """The public centres, or centres at C / 2 around the canonical point or a
        private base point."""
        if not isinstance(self.init, str):
            return to_backend(self.init)
        space = self.space
        base = canonical_point(space)
        if self.private_init:
            base = noisy_mean_steps(space, points, base, self.init_event, self.clip_norm,
                                    rng, self.noise_method)
        return centres_around(space, base, self.n_clusters,
                              INIT_RADIUS_RATIO * self.clip_norm, sampler, rng)

    def _noisy_counts(self, labels, rng):
        event = self.count_event
        statistic = np.bincount(labels, minlength=self.n_clusters).astype(float)
        noise = event.noise_std * rng.standard_normal(self.n_clusters)
        return noisy_stage(statistic, noise, label=event.label, law="gaussian",
                           scale=event.noise_std, sensitivity=event.sensitivity,
                           dim=self.n_clusters)

    def _noisy_sums(self, points, labels, centres, sampler, rng):
        space, event = self.space, self.sum_event
        sums = []
        for j in range(self.n_clusters):
            members = points[np.flatnonzero(labels == j)]
            if members.shape[0] == 0:
                sums.append(gs.zeros(tuple(space.shape)))
                continue
            logs = space.metric.log(members, centres[j])
            clipped = clip_tangent_vectors(space.metric, logs, centres[j], self.clip_norm)
            sums.append(gs.sum(clipped, axis=0))
        noise = sampler.sample(centres, sigma=event.noise_std, random_state=rng)
        metric = space.metric

        def norm(difference):  # the Riemannian norms at the centres, stacked in l2
            return float(np.sqrt(np.sum(to_numpy(metric.squared_norm(difference, centres)))))

        return noisy_stage(gs.stack(sums), noise, label=event.label, law="gaussian",
                           scale=event.noise_std, sensitivity=event.sensitivity,
                           dim=self.n_clusters * int(space.dim), norm=norm)

