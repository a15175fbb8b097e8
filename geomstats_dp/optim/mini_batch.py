"""DP-RSGD: a clipped gradient on a sampled batch (without replacement, or Poisson)
plus tangent Gaussian noise at every step."""

from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np

from geomstats_dp._validation import check_positive_finite, check_positive_int
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.strategies import (
    NoisyQuery,
    Strategy,
    check_noise_std,
    weight_factor,
)
from geomstats_dp.optim.streams import (
    DistinctBatches,
    block_steps,
    distinct_by_rejection,
)

SAMPLINGS = ("without_replacement", "poisson")


@dataclass(frozen=True)
class MiniBatch(Strategy):
    """DP-RSGD: g = (n / b) sum_{i in B} w_i clip_C(grad f_i(x)) + N_x(0, sigma^2).

    With uniform weights this is the batch mean (1/b) sum_{i in B} clip_C(grad f_i(x)),
    an unbiased estimate of the full clipped gradient for both samplings.

    Parameters
    ----------
    batch_size : int
        b: the batch size ("without_replacement", Han et al. 2024 Algorithm 1) or the expected one
        ("poisson": each sample kept with probability ``sampling_rate``; the divisor
        stays b).
    clip_norm : float
    noise_std : float
    sampling : {"without_replacement", "poisson"}
    sampling_rate : float, optional
        "poisson": the public probability q that a sample enters a batch. Under
        add/remove adjacency the dataset size n is private, so q (and b = q N for a
        declared public size N) must not be computed from the data; default b / n.
    """

    batch_size: int
    clip_norm: float
    noise_std: float
    sampling: str = "without_replacement"
    sampling_rate: float = None

    blocks_draws = True

    def __post_init__(self):
        object.__setattr__(self, "batch_size", check_positive_int(self.batch_size, "batch_size"))
        object.__setattr__(self, "clip_norm", check_positive_finite(self.clip_norm, "clip_norm"))
        object.__setattr__(self, "noise_std", check_noise_std(self.noise_std, "noise_std"))
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.sampling_rate is not None:
            rate = check_positive_finite(self.sampling_rate, "sampling_rate")
            if self.sampling != "poisson" or rate > 1:
                raise ValueError(
                    "sampling_rate is for sampling='poisson' and must lie in (0, 1], got "
                    f"{self.sampling_rate} with sampling={self.sampling!r}"
                )

    @property
    def noise_stds(self):
        """(sigma,)."""
        return (self.noise_std,)

    def rate(self, n_samples):
        """Probability that a sample enters a batch."""
        if self.sampling_rate is not None:
            return self.sampling_rate
        return self.batch_size / n_samples

    def check_n_samples(self, n_samples):
        """The batch cannot be larger than the dataset (without a public sampling rate)."""
        if self.sampling_rate is None and self.batch_size > n_samples:
            raise ValueError(
                f"batch_size must be <= the number of samples {n_samples}, "
                f"got {self.batch_size}"
            )

    def queries(self, n_samples, n_iter, sample_weight=None):
        """One mini-batch release per step, sensitivity 2 C n max_i w_i / b (2C/b uniform)."""
        self.check_n_samples(n_samples)
        factor = weight_factor(sample_weight, n_samples)
        sensitivity = clipped_sum_sensitivity(self.clip_norm, self.batch_size, factor)
        query = NoisyQuery(
            "minibatch_gradient", sensitivity, self.noise_std, n_iter, self.sampling,
            self.rate(n_samples),
        )
        return (query,)

    def draw_batches(self, rng, n_samples, n_steps):
        """Indices of the batches of ``n_steps`` steps, in step order (the draws do not
        depend on the data): the values of ``n_steps`` one-step draws from ``rng``.

        Poisson: one uniform per sample and step; without replacement,
        ``rng.choice(n, b, replace=False)`` per step (``batch_stream`` draws these by
        rejection where it suits).

        Returns
        -------
        batches : list of numpy.ndarray of int
        """
        if self.sampling == "poisson":
            kept = rng.random((n_steps, n_samples)) < self.rate(n_samples)
            return [np.flatnonzero(row) for row in kept]
        return [np.asarray(rng.choice(n_samples, size=self.batch_size, replace=False))
                for _ in range(n_steps)]

    def batch_stream(self, rng, n_samples):
        """``draw(n_steps) -> batches`` for the run: without replacement and
        b (b - 1) <= 2n, ``DistinctBatches`` (the same law, vectorised over a block);
        otherwise ``draw_batches``."""
        if self.sampling == "without_replacement" and distinct_by_rejection(
                n_samples, self.batch_size):
            return DistinctBatches(rng, n_samples, self.batch_size).draw
        return lambda n_steps: self.draw_batches(rng, n_samples, n_steps)

    def signal_bound(self, n_samples, sample_weight=None):
        """(n / b) C |B| max_i w_i: C n max_i w_i for batches of b, C (n max_i w_i) n / b
        for a Poisson batch (at most every record)."""
        bound = self.clip_norm * weight_factor(sample_weight, n_samples)
        return bound if self.sampling == "without_replacement" else bound * n_samples / self.batch_size

    def stepper(self, oracle, transport, round_steps):
        """Clipped weighted batch gradient plus noise; batches drawn a block at a time."""
        scale = oracle.n_samples / self.batch_size
        poisson = self.sampling == "poisson"
        stage = {  # as ``queries`` states it; add/remove (Poisson): a record adds or
            # removes one clipped term, half the replace-one bound
            "label": "minibatch_gradient",
            "sensitivity": (1 if poisson else 2) * self.clip_norm * oracle.weight_factor
            / self.batch_size,
            "sampling_rate": self.rate(oracle.n_samples),
            "adjacency": "add_remove" if poisson else "replace_one",
        }
        block = block_steps(oracle.n_samples)
        draw = self.batch_stream(oracle.batch_rng, oracle.n_samples)
        pending = []

        def direction(point, round_step):
            if not pending:
                pending.extend(reversed(draw(block)))
            indices = pending.pop()
            if indices.size == 0:
                gradient = gs.zeros_like(point)
            else:
                gradient = oracle.clipped_sum(point, self.clip_norm, indices, scale)
            return oracle.add_noise(gradient, point, self.noise_std, **stage)

        return direction
