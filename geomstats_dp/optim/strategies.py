"""How each step's noisy gradient is formed: DP-RGD, DP-RSGD, DP-RSVRG (+ restarts).

Every strategy clips per-sample Riemannian gradients at C in the norm of the point they
are taken at, combines them with the sample weights w_i (summing to 1; uniform 1/n by
default) and adds N_x(0, sigma^2) tangent noise at the current point x. ``queries`` lists
each noisy release a run makes, with its replace-one L2 sensitivity (in the Riemannian
norm) and noise standard deviation: what the caller needs for accounting.
"""

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

import geomstats.backend as gs
import numpy as np

from geomstats_dp._validation import (
    check_positive_finite,
    check_positive_int,
)
from geomstats_dp.optim.streams import (
    DistinctBatches,
    block_steps,
    distinct_by_rejection,
)
from geomstats_dp.optim.weights import normalize_sample_weight

SAMPLINGS = ("without_replacement", "poisson")
SNAPSHOT_NOISES = ("epoch", "step")


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
    def stepper(self, oracle, transport):
        """Return ``direction(point, round_step)``: the noisy gradient of one step."""

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


@dataclass(frozen=True)
class FullBatch(Strategy):
    """DP-RGD: g = sum_i w_i clip_C(grad f_i(x)) + N_x(0, sigma^2) at every step.

    Parameters
    ----------
    clip_norm : float
        C > 0.
    noise_std : float
        sigma >= 0 (0 only for noiseless testing).
    """

    clip_norm: float
    noise_std: float

    def __post_init__(self):
        object.__setattr__(self, "clip_norm", check_positive_finite(self.clip_norm, "clip_norm"))
        object.__setattr__(self, "noise_std", check_noise_std(self.noise_std, "noise_std"))

    @property
    def noise_stds(self):
        """(sigma,)."""
        return (self.noise_std,)

    def queries(self, n_samples, n_iter, sample_weight=None):
        """One full-gradient release per step, sensitivity 2 C max_i w_i (2C/n uniform)."""
        max_weight = float(normalize_sample_weight(sample_weight, n_samples).max())
        query = NoisyQuery(
            "full_gradient", 2 * self.clip_norm * max_weight, self.noise_std, n_iter, "none", 1.0
        )
        return (query,)

    def signal_bound(self, n_samples, sample_weight=None):
        """C: a weighted mean of vectors clipped to C."""
        return self.clip_norm

    def stepper(self, oracle, transport):
        """Full clipped weighted gradient plus noise."""

        sensitivity = 2 * self.clip_norm * oracle.max_weight  # as ``queries`` states it

        def direction(point, round_step):
            gradient = oracle.clipped_sum(point, self.clip_norm)
            return oracle.add_noise(gradient, point, self.noise_std, label="full_gradient",
                                    sensitivity=sensitivity)

        return direction


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
        sensitivity = 2 * self.clip_norm * factor / self.batch_size
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

    def stepper(self, oracle, transport):
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


@dataclass(frozen=True)
class VarianceReduced(Strategy):
    """DP-RSVRG (Utpala et al. 2023, Algorithm 11) and, with restarts, Algorithm 12.

    Each epoch starts at a snapshot w~ (the current point) with the noisy full gradient
    g~ = sum_i w_i clip_C0(grad f_i(w~)) + xi_1, xi_1 ~ N_w~(0, sigma_full^2); each of its
    ``inner_steps`` steps at x draws i uniformly from {0..n-1} and moves along

        v = n w_i [clip_C1(grad f_i(x)) - T(clip_C1(grad f_i(w~)))] + T(g~) + xi_2,

    xi_2 ~ N_x(0, sigma_single^2), T the vector transport w~ -> x (``resolve_transport``;
    a non-isometric T is followed by re-clipping T(.) to the norm it had, so the bound
    below holds for any transport). One epoch evaluates n + 2 * inner_steps per-sample
    gradients. ``n_iter`` of ``minimize`` counts epochs per round.

    Parameters
    ----------
    inner_steps : int
        m, steps per epoch.
    clip_norm_full, clip_norm_single : float
        C0 (full-gradient query) and C1 (single-sample gradients).
    noise_std_full, noise_std_single : float
        sigma_full and sigma_single (>= 0).
    restarts : int
        Number of restarts (Utpala et al. 2023, Algorithm 12): the run has restarts + 1 rounds of
        ``n_iter`` epochs, and each round but the last hands a uniformly random iterate of
        the round (Output II) to the next. 0 is Algorithm 11.
    snapshot_noise : {"epoch", "step"}
        "epoch": xi_1 drawn once per epoch (S releases of the full-gradient query per
        round). "step": xi_1 redrawn at every inner step, which is Algorithm 11 of Utpala et
        al. 2023 as printed (its noise eps_t ~ N(0, sigma^2) splits as T(xi_1) + xi_2,
        Section 5.1), and releases the full-gradient query m * S times per round.
    """

    inner_steps: int
    clip_norm_full: float
    clip_norm_single: float
    noise_std_full: float
    noise_std_single: float
    restarts: int = 0
    snapshot_noise: str = "epoch"

    needs_transport = True

    def __post_init__(self):
        checked = {
            "inner_steps": check_positive_int(self.inner_steps, "inner_steps"),
            "clip_norm_full": check_positive_finite(self.clip_norm_full, "clip_norm_full"),
            "clip_norm_single": check_positive_finite(
                self.clip_norm_single, "clip_norm_single"
            ),
            "noise_std_full": check_noise_std(self.noise_std_full, "noise_std_full"),
            "noise_std_single": check_noise_std(self.noise_std_single, "noise_std_single"),
            "restarts": check_positive_int(self.restarts, "restarts", minimum=0),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        if self.snapshot_noise not in SNAPSHOT_NOISES:
            raise ValueError(
                f"snapshot_noise must be one of {SNAPSHOT_NOISES}, got {self.snapshot_noise!r}"
            )

    @property
    def noise_stds(self):
        """(sigma_full, sigma_single)."""
        return (self.noise_std_full, self.noise_std_single)

    @property
    def n_rounds(self):
        """restarts + 1."""
        return self.restarts + 1

    def steps_per_round(self, n_iter):
        """n_iter epochs of inner_steps steps."""
        return n_iter * self.inner_steps

    def queries(self, n_samples, n_iter, sample_weight=None):
        """Full gradient: 2 C0 max_i w_i (Utpala et al. 2023, Claim 3: 2 C0 / n);
        variance-reduced single sample: 4 C1 n max_i w_i (Claim 3: 4 C1), sampled at rate 1/n."""
        max_weight = float(normalize_sample_weight(sample_weight, n_samples).max())
        factor = weight_factor(sample_weight, n_samples)
        steps = self.n_rounds * n_iter * self.inner_steps
        full_releases = steps if self.snapshot_noise == "step" else self.n_rounds * n_iter
        full = NoisyQuery(
            "full_gradient",
            2 * self.clip_norm_full * max_weight,
            self.noise_std_full,
            full_releases,
            "none",
            1.0,
        )
        single = NoisyQuery(
            "variance_reduced_gradient",
            4 * self.clip_norm_single * factor,
            self.noise_std_single,
            steps,
            "without_replacement",
            1.0 / n_samples,
        )
        return (full, single)

    def signal_bound(self, n_samples, sample_weight=None):
        """2 C1 n max_i w_i + C0: the difference of two clipped terms plus the (re-clipped)
        transported full gradient."""
        return (2 * self.clip_norm_single * weight_factor(sample_weight, n_samples)
                + self.clip_norm_full)

    def stepper(self, oracle, transport):
        """A stateful stepper holding the epoch's snapshot."""
        return _VarianceReducedStepper(self, oracle, transport)


class _VarianceReducedStepper:
    """The epoch state of DP-RSVRG: snapshot, its noisy full gradient, sampled indices."""

    def __init__(self, strategy, oracle, transport):
        self.strategy = strategy
        self.oracle = oracle
        self.transport = transport
        self.snapshot = self.full_gradient = self.noisy_full_gradient = self.indices = None
        # the stages of the two queries, as ``VarianceReduced.queries`` states them
        self.full_stage = {"label": "full_gradient",
                           "sensitivity": 2 * strategy.clip_norm_full * oracle.max_weight}
        self.single_stage = {
            "label": "variance_reduced_gradient",
            "sensitivity": 4 * strategy.clip_norm_single * oracle.weight_factor,
            "sampling_rate": 1.0 / oracle.n_samples,
        }

    def _noisy_full_gradient(self):
        """g~: the snapshot's full gradient plus its noise (a full-gradient stage)."""
        return self.oracle.add_noise(self.full_gradient, self.snapshot,
                                     self.strategy.noise_std_full, **self.full_stage)

    def _start_epoch(self, point):
        strategy, oracle = self.strategy, self.oracle
        self.snapshot = point
        self.full_gradient = oracle.clipped_sum(point, strategy.clip_norm_full)
        if strategy.snapshot_noise == "epoch":
            self.noisy_full_gradient = self._noisy_full_gradient()
        self.indices = np.asarray(
            oracle.batch_rng.integers(0, oracle.n_samples, size=strategy.inner_steps)
        )

    def _transport_from_snapshot(self, anchor, noisy_full_gradient, point, inner_step):
        """T(anchor) and T(g~), with T(anchor) no longer than anchor."""
        if inner_step == 0:
            return anchor, noisy_full_gradient
        moved = self.transport(gs.stack([anchor, noisy_full_gradient]), self.snapshot, point)
        moved_anchor = moved[0]
        if not self.transport.isometric:
            metric = self.oracle.metric
            anchor_norm = float(metric.norm(anchor, self.snapshot))
            moved_norm = float(metric.norm(moved_anchor, point))
            if moved_norm > anchor_norm:
                moved_anchor = moved_anchor * (anchor_norm / moved_norm)
        return moved_anchor, moved[1]

    def __call__(self, point, round_step):
        strategy, oracle = self.strategy, self.oracle
        inner_step = round_step % strategy.inner_steps
        if inner_step == 0:
            self._start_epoch(point)
        noisy_full_gradient = self.noisy_full_gradient
        if strategy.snapshot_noise == "step":
            noisy_full_gradient = self._noisy_full_gradient()
        index = self.indices[inner_step : inner_step + 1]
        clip_norm, scale = strategy.clip_norm_single, oracle.n_samples
        current = oracle.clipped_sum(point, clip_norm, index, scale)
        anchor = oracle.clipped_sum(self.snapshot, clip_norm, index, scale)
        moved_anchor, moved_full = self._transport_from_snapshot(
            anchor, noisy_full_gradient, point, inner_step
        )
        return oracle.add_noise(current - moved_anchor + moved_full, point,
                                strategy.noise_std_single, **self.single_stage)
