"""The private choice between item means and DP-ALS (``method="select"``).

A rank-r model can complete ratings worse than the item means, even without noise (rows
far from low rank, few ratings per user to fit a user's factor on), and the noise of
DP-ALS grows with r. This release fits both candidates and chooses one by the users'
errors on ratings they held out of their own fits:

1. item means (``item_means``): (S, N), the users' sums and counts weighted by
   1 / sqrt(k_u), released with Gaussian noise; the item means shrunk towards their
   average (``item_means.shrunk_item_means``); two rank-0 candidates (``rank0``): the
   shrunk item means as they are, and each user adding their own shrunk offset
   (``_local_completion.shrunk_offsets``);
2. DP-ALS of rank r (``alternating_least_squares``);
3. a public pattern holds out user u's ratings of the items j with (u + j) = 0 modulo
   ``holdout_period`` (a fifth of every user's items by default; fixed and
   data-independent, unlike draws from the release's generator, which a caller's own
   split with the same seed would repeat); every user's mean squared error on their
   held-out ratings, for each candidate (item means: b_j, or b_j plus the user's own
   shrunk offset from the ratings they kept; DP-ALS with each user ridge of
   ``ridges`` and the release's own: the user's own completion from the ratings they
   kept, ``_local_completion``: the user-side fit,
   where a rank-r model overfits, sees none of the held-out ratings; the item side saw
   them among those of every other user), predictions and ratings clipped to [-h, h],
   each user's error
   clipped to B = h^2 / 4 (a user without held-out rating scores 0; ``score`` and
   ``clip`` offer the root and absolute errors, clipped to c h, and other clips, scored
   on synthetic matrices, ``benchmarks/matrix_completion_scores.py``); the utility of a
   candidate is minus the sum over users, and the exponential mechanism (McSherry &
   Talwar 2007) at ``selection_epsilon`` picks one.

The release holds both candidates' item sides (post-processing of their noisy
statistics), ``rank_`` (0: item means, r: DP-ALS), ``user_offsets_`` (whether users add
their own offset: False only for the plain item means), ``regularization_`` (the users'
ridge chosen with DP-ALS: the ridge that suits the data's departure from rank r is not a
function of the noise, and choosing it costs nothing more than the choice) and the
chosen item side users complete their rows with. The price against DP-ALS alone: the selection's share of
epsilon and one more Gaussian release at the same noise multiplier
(docs/matrix_completion.md).

Privacy. Adjacency: USER-LEVEL replace-one. (S, N) has sensitivity 2h (``item_means``,
attained: the same items rated h and -h); with the T + 1 releases of
DP-ALS these are T + 2 Gaussian releases of one noise multiplier z, calibrated to
(epsilon - selection_epsilon, delta) by exact Gaussian-DP composition
(``privacy.calibrate_gaussian``). Each utility moves by at most B when one user's row is
replaced, given the released candidates (every user's term lies in [0, B]): the choice
is a ``PureEvent`` of ``selection_epsilon``. The total is their
composition (``PrivacyBudget``).
"""

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from geomstats_dp.learning._local_completion import (
    OFFSET_STRICTNESS,
    centred_ratings,
    complete_offsets,
    complete_rows,
)
from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
    check_user_rows,
    user_blocks,
)
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.item_means import (
    item_means,
    noisy_sums,
    shrunk_item_means,
)
from geomstats_dp.learning.mechanisms.rating_scale import tightened
from geomstats_dp.privacy import PureEvent
from geomstats_dp.privacy.quantile import exponential_mechanism
from geomstats_dp.privacy.stages import discrete_stage

SELECTION_SHARE = 0.1  # of epsilon, spent on the choice
HOLDOUT_PERIOD = 5
RIDGES = (0.1, 1.0, 10.0)  # the users' ridges offered besides the release's own
SCORE = "squared"  # each user's held-out error (``SCORES``)
ERROR_CLIP = 0.25  # B = ERROR_CLIP h^p (p of ``SCORES``): one user's clipped error
SCORES = {"squared": 2, "root": 1, "absolute": 1}  # score: the power p of h in B
RANK0 = ("means", "means+offsets")  # the rank-0 candidates (``RankChoiceRelease``)
INFORMED_CHOICE = 300.0  # selection epsilon x users from which "auto" runs the choice
MEANS_SIGNAL = 10.0  # signal_ratio from which "auto" runs the rank-0 release below it


def informed_choice(n_users, epsilon, selection_share=SELECTION_SHARE):
    """Whether the choice can tell the candidates apart: epsilon_s n >= ``INFORMED_CHOICE``.

    The exponential mechanism favours a candidate by odds e when the users' summed
    held-out errors differ by 2B / epsilon_s, a mean difference per user of
    2B / (epsilon_s n): at most 0.7% of the error clip B here. Below, the choice is
    close to a draw at random, and ``method="auto"`` spends the whole budget on one
    candidate (``auto_method``). Derived on synthetic matrices (``benchmarks/
    matrix_completion_rank0.py``, ``matrix_completion_auto_rule.py``; 100 before them).
    A rule on public quantities (n, epsilon).
    """
    return selection_share * epsilon * n_users >= INFORMED_CHOICE


def signal_ratio(n_users, n_items, noise_multiplier):
    """n / (sqrt(m) z): the weighted count of an item that every user rates over the noise
    multiplier of DP-ALS (a user's weight 1 / sqrt(k_u) with k_u = m), a public proxy
    of the signal of the item statistics, whose noise DP-ALS thresholds."""
    return n_users / (math.sqrt(n_items) * noise_multiplier)


def auto_method(n_users, n_items, epsilon, noise_multiplier):
    """``method="auto"``: "select" where ``informed_choice``; else "means" (the rank-0
    release) where ``signal_ratio`` reaches ``MEANS_SIGNAL``, else "als". A rule on
    public quantities (n, m, epsilon and the noise multiplier z of DP-ALS alone, a
    function of epsilon and delta), derived on synthetic matrices
    (``benchmarks/matrix_completion_rank0.py``, ``matrix_completion_auto_rule.py``).
    """
    if informed_choice(n_users, epsilon):
        return "select"
    if signal_ratio(n_users, n_items, noise_multiplier) >= MEANS_SIGNAL:
        return "means"
    return "als"


def usable_ratings(ratings, rating_range, offset):
    """``centred_ratings``, with every rating of a user who has an infinite one missing
    (such a user contributes nothing)."""
    centred = centred_ratings(ratings, rating_range, offset)
    centred[np.isinf(centred).any(axis=1)] = np.nan
    return centred


def held_out_errors(predicted, ratings, half_width, score=SCORE, clip=ERROR_CLIP):
    """Each user's error on their held-out ratings, clipped to B = clip h^p.

    Parameters
    ----------
    predicted : numpy.ndarray, shape=[n_users, n_items] or [n_items]
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Held-out centred ratings, NaN elsewhere.
    half_width : float
    score : str
        "squared": the mean squared error over the user's held-out ratings ($p = 2$);
        "root": its square root, "absolute": the mean absolute error ($p = 1$).
    clip : float

    Returns
    -------
    errors : numpy.ndarray, shape=[n_users]
        0 for a user without held-out rating.
    """
    held = np.isfinite(ratings)
    values = np.clip(np.where(held, ratings, 0.0), -half_width, half_width)
    residual = np.where(held, np.clip(predicted, -half_width, half_width) - values, 0.0)
    power = 1 if score == "absolute" else 2
    errors = (np.abs(residual)**power).sum(axis=1) / np.maximum(held.sum(axis=1), 1)
    errors = np.sqrt(errors) if score == "root" else errors
    return np.minimum(errors, clip * half_width**SCORES[score])


def held_out_utilities(ratings, transform, candidates, half_width, period, **score):
    """Minus the sum of the users' held-out errors (``held_out_errors``) of each candidate.

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
    transform : callable
        The per-user map that centres a block of rows.
    candidates : list of callable
        ``candidate(kept)`` -> the predictions [n_rows, n_items] (or [n_items]) of the
        users of a block from the ratings they kept.
    half_width : float
    period : int
        User u holds out the items j with (u + j) % period == 0.
    **score
        ``score`` and ``clip`` of ``held_out_errors``.

    Returns
    -------
    utility : numpy.ndarray, shape=[len(candidates)]
    """
    utility = np.zeros(len(candidates))
    for rows, block in user_blocks(ratings, transform):
        users = np.arange(rows.start, rows.stop)[:, None]
        held = (users + np.arange(block.shape[1])) % period == 0
        kept = np.where(held, np.nan, block)
        block[~held] = np.nan
        utility -= [held_out_errors(candidate(kept), block, half_width, **score).sum()
                    for candidate in candidates]
    return utility


@dataclass(frozen=True)
class RankChoiceRelease(Mechanism):
    """Item means or DP-ALS of rank r, chosen privately on held-out ratings (module doc).

    Parameters
    ----------
    als : AlternatingLeastSquaresRelease
        The rank-r candidate, its (epsilon, delta) the Gaussian share of the release and
        ``shared_releases=1`` (the item means share its noise multiplier).
    selection_epsilon : float
        The epsilon of the choice.
    holdout_period : int
        >= 2: user u holds out the items j with (u + j) % holdout_period == 0.
    ridges : tuple of float
        The users' ridges offered with DP-ALS besides the release's own.
    score : str
        Each user's held-out error (``held_out_errors``).
    clip : float
        B = clip h^p, p = ``SCORES[score]``.
    rank0 : tuple of str
        The rank-0 candidates: "means" (the item means shrunk by ``item_means.
        shrunk_item_means``), "means+offsets" (each user adding their own shrunk offset,
        ``_local_completion.shrunk_offsets``), "raw" (the item means unshrunk: the
        release before issue 31's rank-0 work, kept for the derivation).
    strictness : float
        tau of the users' shrunk offsets (``_local_completion.shrunk_offsets``).
    """

    adjacency: ClassVar[str] = "user_level"

    als: AlternatingLeastSquaresRelease
    selection_epsilon: float
    holdout_period: int = HOLDOUT_PERIOD
    ridges: tuple = RIDGES
    score: str = SCORE
    clip: float = ERROR_CLIP
    rank0: tuple = RANK0
    strictness: float = OFFSET_STRICTNESS

    @property
    def means_sensitivity(self):
        """2h: the item means' (S, N), every item together (module docstring)."""
        return 2 * self.als.half_width

    @property
    def error_clip(self):
        """B = clip h^p, the sensitivity of each candidate's utility."""
        return self.clip * self.als.half_width**SCORES[self.score]

    def _label(self, part):
        return f"{self.als.label} rank choice: {part}"

    def events(self):
        # with a private scale, h (and the sensitivities 2h, B) follow its release
        public = self.als.scale is None
        return self.als.events() + (
            self.als.gaussian_event(self.means_sensitivity, self._label("item means")),
            PureEvent(self.selection_epsilon, label=self._label("choice"),
                      sensitivity=self.error_clip if public else None),
        )

    def release(self, data, weights, rng):
        check_user_rows(data, weights, self.als.n_samples, "select")
        transform = functools.partial(usable_ratings, rating_range=self.als.rating_range,
                                      offset=self.als.offset)
        # the private scale first (if any): h, C and the sensitivities below follow it
        spec = dataclasses.replace(
            self, als=tightened(self.als, user_blocks(data, transform), rng))
        return {**spec.release_choice(data, rng, transform),
                "clip_norm_": self.als.clip_norm}  # the public bound

    def release_choice(self, data, rng, transform):
        """The release on ``data`` (``transform`` centres a block of rows) with a public
        h and C."""
        half_width = self.als.half_width
        noise_std = self.als.noise_multiplier * self.means_sensitivity
        sums, counts = noisy_sums(data, half_width, noise_std, rng, transform,
                                  label=self._label("item means"),
                                  sensitivity=self.means_sensitivity)
        shrunk = shrunk_item_means(sums, counts, half_width, noise_std)
        fitted = self.als.release_blocks(data, rng, transform)
        ridges = (fitted["regularization_"], *self.ridges)
        rank0 = [(item_means(sums, counts, half_width, noise_std)[0] if name == "raw"
                  else shrunk, name.endswith("offsets")) for name in self.rank0]
        candidates = [functools.partial(complete_offsets, item,
                                        strictness=self.strictness) if offsets
                      else (lambda kept, item=item: item) for item, offsets in rank0]
        candidates += [functools.partial(
            complete_rows, fitted["item_offsets_"], fitted["item_factors_"],
            regularization=ridge) for ridge in ridges]
        utility = held_out_utilities(data, transform, candidates, half_width,
                                     self.holdout_period, score=self.score, clip=self.clip)
        index = discrete_stage(
            exponential_mechanism(utility, self.selection_epsilon, self.error_clip, rng),
            label=self._label("choice"), epsilon=self.selection_epsilon,
            sensitivity=self.error_clip, utility=utility, adjacency="user_level")
        fitted["noise_multipliers_"] = {**fitted["noise_multipliers_"],
                                        "item means": self.als.noise_multiplier}
        fitted["item_means_"] = shrunk
        fitted["user_offsets_"] = True
        if index >= len(rank0):
            fitted["rank_"] = self.als.rank
            fitted["regularization_"] = ridges[index - len(rank0)]
        else:
            fitted["rank_"] = 0
            fitted["item_offsets_"], fitted["user_offsets_"] = rank0[index]
            fitted["item_factors_"] = np.zeros_like(fitted["item_factors_"])
        return fitted


def rank_choice(als, selection_share=SELECTION_SHARE):
    """The ``RankChoiceRelease`` of a DP-ALS spec's (epsilon, delta): ``selection_share``
    of epsilon for the choice, the rest for the T + 2 Gaussian releases."""
    selection = selection_share * als.epsilon
    return RankChoiceRelease(
        dataclasses.replace(als, epsilon=als.epsilon - selection, shared_releases=1),
        selection)
