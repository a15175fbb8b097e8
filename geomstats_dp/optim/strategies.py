"""What every strategy shares: how each step's noisy gradient is formed, and the noisy
queries a run makes.

Every strategy clips per-sample Riemannian gradients at C in the norm of the point they
are taken at, combines them with the sample weights w_i (summing to 1; uniform 1/n by
default) and adds N_x(0, sigma^2) tangent noise at the current point x. ``queries`` lists
each noisy release a run makes, with its replace-one L2 sensitivity (in the Riemannian
norm) and noise standard deviation: what the caller needs for accounting. The families:
``full_batch.FullBatch`` (DP-RGD), ``mini_batch.MiniBatch`` (DP-RSGD) and
``variance_reduced.VarianceReduced`` (DP-RSVRG, with restarts).
"""

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

from geomstats_dp._validation import check_positive_finite
from geomstats_dp.optim.weights import normalize_sample_weight


def weight_factor(sample_weight, n_samples):
    """n max_i w_i of the normalised weights: exactly 1.0 for uniform (None) weights."""
    if sample_weight is None:
        return 1.0
    return n_samples * float(normalize_sample_weight(sample_weight, n_samples).max())


def check_noise_std(value, name):
    """Return a noise standard deviation as a float: finite and > 0, or exactly 0."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == 0:
        return 0.0
    return check_positive_finite(value, name)


@dataclass(frozen=True)
class NoisyQuery:
    """One kind of noisy release made by a run.

    Attributes
    ----------
    name : str
        "full_gradient", "minibatch_gradient" or "variance_reduced_gradient".
    sensitivity : float
        Replace-one L2 sensitivity of the query in the Riemannian norm at the point where
        the noise is added (for a sampled query: given that the replaced sample is drawn).
    noise_std : float
        Standard deviation sigma of the tangent Gaussian added to it.
    n_releases : int
        How many times a run releases it (each with fresh noise).
    sampling : str
        "none" (whole dataset), "without_replacement" (a fixed-size subset, uniformly)
        or "poisson" (each sample independently).
    sampling_rate : float
        Batch size / n (1.0 without sampling).
    """

    name: str
    sensitivity: float
    noise_std: float
    n_releases: int
    sampling: str
    sampling_rate: float

    @property
    def noise_multiplier(self):
        """noise_std / sensitivity."""
        return self.noise_std / self.sensitivity


class Strategy(ABC):
    """How a step forms its noisy gradient; ``minimize`` runs the loop."""

    needs_transport = False
    blocks_draws = False
    """Whether the strategy draws its batches and noise a block of steps at a time (from
    two streams split from the run's generator, ``optim.streams``)."""

    @property
    def n_rounds(self):
        """Rounds of the run; each but the last ends by restarting from a random iterate."""
        return 1

    def steps_per_round(self, n_iter):
        """Manifold steps in one round for ``n_iter``."""
        return n_iter

    def check_n_samples(self, n_samples):
        """Raise ValueError if the strategy cannot run on ``n_samples`` samples."""

    @property
    @abstractmethod
    def noise_stds(self):
        """The noise standard deviations the strategy adds."""

    @abstractmethod
    def queries(self, n_samples, n_iter, sample_weight=None):
        """The noisy releases of a run on ``n_samples`` samples.

        Parameters
        ----------
        n_samples : int
        n_iter : int
        sample_weight : array-like, shape=[n_samples], optional

        Returns
        -------
        queries : tuple of NoisyQuery
        """

    @abstractmethod
    def stepper(self, oracle, transport, round_steps):
        """Return ``direction(point, round_step)``: the noisy gradient of one step of
        the rounds of ``round_steps`` steps."""

    @abstractmethod
    def signal_bound(self, n_samples, sample_weight=None):
        """A public bound on the norm of a step's gradient without its noise.

        Parameters
        ----------
        n_samples : int
        sample_weight : array-like, shape=[n_samples], optional

        Returns
        -------
        bound : float
        """
