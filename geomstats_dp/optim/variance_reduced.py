"""DP-RSVRG: variance-reduced steps from a noisy snapshot gradient (Utpala et al. 2023,
Algorithms 11 and 12)."""

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
from geomstats_dp.optim.weights import normalize_sample_weight

SNAPSHOT_NOISES = ("epoch", "step")


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
            clipped_sum_sensitivity(self.clip_norm_full, 1, max_weight),
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
        return (clipped_sum_sensitivity(self.clip_norm_single, 1,
                                        weight_factor(sample_weight, n_samples))
                + self.clip_norm_full)

    def stepper(self, oracle, transport, round_steps):
        """A stateful stepper holding the epoch's snapshot."""
        return _VarianceReducedStepper(self, oracle, transport)


class _VarianceReducedStepper:
    """The epoch state of DP-RSVRG: snapshot, its noisy full gradient, sampled indices."""

    def __init__(self, strategy, oracle, transport):
        self.strategy = strategy
        self.oracle = oracle
        self.transport = transport
        self.snapshot = self.full_gradient = self.noisy_full_gradient = self.indices = None
        self.noise_draws_per_step = (strategy.noise_std_single > 0) + (
            strategy.snapshot_noise == "step" and strategy.noise_std_full > 0)
        # the stages of the two queries, as ``VarianceReduced.queries`` states them
        self.full_stage = {"label": "full_gradient",
                           "sensitivity": clipped_sum_sensitivity(
                               strategy.clip_norm_full, 1, oracle.max_weight)}
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
        # the epoch's steps draw their noise before the next epoch's draws
        oracle.reserve_noise(strategy.inner_steps * self.noise_draws_per_step)

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
