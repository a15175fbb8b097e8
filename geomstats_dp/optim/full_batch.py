"""DP-RGD: the full clipped gradient plus tangent Gaussian noise at every step."""

from dataclasses import dataclass

from geomstats_dp._validation import check_positive_finite
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.optim.strategies import NoisyQuery, Strategy, check_noise_std
from geomstats_dp.optim.weights import normalize_sample_weight


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
            "full_gradient", clipped_sum_sensitivity(self.clip_norm, 1, max_weight), self.noise_std, n_iter, "none", 1.0
        )
        return (query,)

    def signal_bound(self, n_samples, sample_weight=None):
        """C: a weighted mean of vectors clipped to C."""
        return self.clip_norm

    def stepper(self, oracle, transport, round_steps):
        """Full clipped weighted gradient plus noise. The run's only draws are the
        steps' noise (a "random" output draws its index before the first): they are
        reserved at once (``GradientOracle.reserve_noise``)."""
        if self.noise_std > 0:
            oracle.reserve_noise(round_steps)
        sensitivity = clipped_sum_sensitivity(self.clip_norm, 1, oracle.max_weight)  # as ``queries`` states it

        def direction(point, round_step):
            gradient = oracle.clipped_sum(point, self.clip_norm)
            return oracle.add_noise(gradient, point, self.noise_std, label="full_gradient",
                                    sensitivity=sensitivity)

        return direction
