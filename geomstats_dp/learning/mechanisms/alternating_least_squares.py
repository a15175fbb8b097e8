"""DP alternating least squares in the billboard model (``method="als"``).

Chien et al. (2021, "Private alternating least squares") in the billboard model of Jain
et al. (2018): the item side is released, every user fits their own side locally. With
public item offsets b and item factors F [n_items, r], one alternation is:

1. every user u fits (c_u, v_u) to their own centred ratings (``_local_completion``) and
   forms a_u = (kappa, v_u) and the targets y_uj = x_uj - c_u on their rated items;
   kappa = h / 2, half the public half-width h of the ratings, puts the offsets'
   coordinate on the scale of the factors (with 1 in its place, the weighted counts
   would drown in the noise sized for the ratings);
2. the item-side sufficient statistics, for every item j,
   G_j = sum_u w_u a_u a_u^T and m_j = sum_u w_u y_uj a_u over the users who rated j,
   are released with Gaussian noise; w_u = s_u / sqrt(k_u), k_u the user's number of
   ratings and s_u <= 1 the clip factor below;
3. every item's coefficients (b_j / kappa, f_j) solve the noisy normal equations with
   shrinkage (``solve_items``, post-processing): eigenvalues of G_j below the noise's
   spectral norm sigma sqrt(2 (r + 1)) give nothing, larger ones are shrunk towards it,
   so an item whose statistics are mostly noise gets b_j = 0 and f_j = 0 (its
   completion is the user's own offset). The next alternation's users fit against
   sqrt(n_items) times an orthonormal basis of span(f) (a change of basis of the user
   factors that keeps v_u of the order of the ratings); the last f is released as it
   is, so that its shrinkage reaches the users' ridge fits.

The start (item offsets 0) is a private first step, the Analyze-Gauss style spectral
initialisation of alternating minimisation (Jain et al. 2013; Dwork et al. 2014): the
second moment S = sum_u s_u x_u x_u^T / k_u of the users' own-mean-centred rating
vectors x_u (0 where unrated) is released with symmetric Gaussian noise and F starts as
sqrt(n_items) times its top-r eigenvectors.

User factors and biases are never released; ``components_`` is the orthonormal basis,
``item_factors_`` and ``item_offsets_`` what a user needs to complete their row.

Privacy. Adjacency: USER-LEVEL replace-one (one user's whole row replaced, which items
they rated included); the number of users and items are public. One user's statistics
over all items form one vector (G_j as a symmetric matrix in isometric coordinates: its
Frobenius norm), of squared norm

    sum_{j rated} w_u^2 (|a_u|^4 + y_uj^2 |a_u|^2) = (s_u^2 / k_u) (k_u |a_u|^4 + |a_u|^2 |y_u|^2),

and the clip factor s_u scales it to at most ``clip_norm`` C (a reweighting of the user:
it does not bias the item solve when the model holds). The joint L2 sensitivity of one
alternation's release, over every item, is 2C; the noise is N(0, sigma^2) on every
coordinate (the symmetric noise (E + E^T) / 2 on G_j), sigma = z 2C. The T alternations
are T Gaussian releases; the start is one more, |x_u x_u^T|_F / k_u = |x_u|^2 / k_u
clipped to C by s_u, of sensitivity sqrt(2) C (|P - P'|_F^2 <= |P|_F^2 + |P'|_F^2 for
positive semi-definite P, P'). The T + 1 releases share one noise multiplier z and
compose exactly (Gaussian DP: z = sqrt(T + 1) / mu; two ``GaussianEvent``), calibrated by
``privacy.calibrate_gaussian``. Users whose statistics are not finite (an infinite or
overflowing rating) contribute zero. With ``scale``, a private quantile first tightens h
and C (``rating_scale``: one more ``PureEvent``).
"""

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from geomstats_dp.learning._item_solve import scaled_basis, solve_items
from geomstats_dp.learning._local_completion import centred_ratings, fit_users
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.clip_bound import AutoClip
from geomstats_dp.learning.mechanisms.rating_scale import scale_event, tightened
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.privacy import GaussianEvent, calibrate_gaussian
from geomstats_dp.privacy.stages import noisy_stage

NEGLIGIBLE_NOISE = 0.2  # noise multiplier below which more alternations pay
LONG_N_ITER = 3
RIDGE = 1.0  # the users' ridge where the noise is not negligible: one rating's worth
RIDGE_FLOOR = 1e-8  # keeps a user's normal equations solvable without noise
THRESHOLD_FACTOR = 1.0  # eigenvalue threshold sigma sqrt(2 (r + 1)): the noise's norm
SHRINKAGE_FACTOR = 1.0
BLOCK_BYTES = 4 * 2**20  # the users' rows read at a time: no temporary of every user


def default_n_iter(epsilon, delta):
    """T: 3 alternations where the noise of 4 releases is negligible, else 1.

    Each alternation adds a release (the noise multiplier grows as sqrt(T + 1)), which
    pays only where the noise is negligible (docs/benchmarks/matrix_completion.md,
    "Measurements behind the defaults"). The rule reads epsilon and delta only.
    """
    noise = calibrate_gaussian(epsilon, delta, LONG_N_ITER + 1)
    return LONG_N_ITER if noise < NEGLIGIBLE_NOISE else 1


def default_regularization(noise_multiplier):
    """lambda of the users' ridge fits: RIDGE * min(1, z / NEGLIGIBLE_NOISE).

    The ridge stands in for the error of the noisy item factors a user fits against,
    which is proportional to the noise multiplier z of the release; where the noise is
    negligible it vanishes (down to ``RIDGE_FLOOR``), so that a huge epsilon gives
    alternating least squares itself. A public function of z (epsilon, delta, T).
    """
    return max(RIDGE * min(1.0, noise_multiplier / NEGLIGIBLE_NOISE), RIDGE_FLOOR)


def gaussian_noise(rng, std, shape):
    """N(0, std^2) draws of ``shape``: every noise draw of the release goes through here."""
    return std * rng.standard_normal(shape)


def frobenius_norm(array):
    """The l2 norm of every entry: the Frobenius norm, whose coordinates are the isometric
    ones of the symmetric matrices (the noise's variance on each is noise_std^2)."""
    return float(np.linalg.norm(np.ravel(array)))


def user_blocks(ratings, transform=None):
    """The rows of ``ratings`` in blocks of at most ``BLOCK_BYTES``, each passed through
    ``transform`` (a per-user map, e.g. ``centred_ratings``) if given.

    Yields
    ------
    rows : slice
    block : numpy.ndarray, shape=[n_rows, n_items]
    """
    n_users, n_items = ratings.shape
    size = max(1, BLOCK_BYTES // (8 * max(n_items, 1)))
    for start in range(0, n_users, size):
        rows = slice(start, min(start + size, n_users))
        yield rows, ratings[rows] if transform is None else transform(ratings[rows])


def check_user_rows(data, weights, n_samples, method):
    """Raise ValueError unless ``data`` holds the spec's ``n_samples`` users and no
    ``sample_weight`` is given (the user-level releases weigh every user alike)."""
    if weights is not None:
        raise ValueError(f"sample_weight is not supported with method={method!r}")
    if len(data) != n_samples:
        raise ValueError(f"X must hold the spec's n_samples={n_samples} users, "
                         f"got {len(data)}")


def second_moment(ratings, clip_norm):
    """S = sum_u s_u x_u x_u^T / k_u of one block of users (module docstring).

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings, NaN where missing.
    clip_norm : float
        C, the bound on |x_u|^2 / k_u.

    Returns
    -------
    moment : numpy.ndarray, shape=[n_items, n_items]
    """
    observed = np.isfinite(ratings) & ~np.isinf(ratings).any(axis=1)[:, None]
    counts = np.maximum(observed.sum(axis=1), 1)
    means = np.where(observed, ratings, 0.0).sum(axis=1) / counts
    centred = np.where(observed, ratings - means[:, None], 0.0)
    norms = np.sum(centred**2, axis=1) / counts
    valid = np.isfinite(norms)
    # a zero norm (a user's ratings all equal) divides by 1: the term is zero anyway
    safe = np.where(valid & (norms > 0), norms, 1.0)
    scale = np.where(valid, np.minimum(1.0, clip_norm / safe), 0.0)
    centred[~valid] = 0.0
    return (centred * (scale / counts)[:, None]).T @ centred


def noisy_spectral_start(ratings, rank, clip_norm, noise_std, rng, transform=None,
                         **stage):
    """Item factors from the noisy second moment of the users' centred ratings (module doc).

    Parameters
    ----------
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings (or ratings ``transform`` centres), NaN where missing.
    rank : int
    clip_norm : float
        C, the bound on |x_u|^2 / k_u.
    noise_std : float
        Standard deviation of the noise on each isometric coordinate.
    rng : numpy.random.Generator
    transform : callable, optional
        A per-user map applied to each block of rows (``user_blocks``).
    **stage
        ``label`` and ``sensitivity`` of the release (``privacy.stages.noisy_stage``; a
        user-level stage in the Frobenius norm).

    Returns
    -------
    item_factors : numpy.ndarray, shape=[n_items, rank]
    """
    n_items = ratings.shape[1]
    moment = np.zeros((n_items, n_items))
    for _, block in user_blocks(ratings, transform):
        moment += second_moment(block, clip_norm)
    noise = gaussian_noise(rng, noise_std, moment.shape)
    released = noisy_stage(moment, (noise + noise.T) / 2, law="gaussian", scale=noise_std,
                           dim=n_items * (n_items + 1) // 2, norm=frobenius_norm,
                           adjacency="user_level", **stage)
    eigenvectors = np.linalg.eigh(released)[1]
    return scaled_basis(eigenvectors[:, -rank:])


def clipped_user_statistics(item_offsets, item_factors, ratings, regularization, clip_norm,
                            constant):
    """Every user's features a_u, residuals y_u and weight w_u (module docstring).

    Parameters
    ----------
    item_offsets : numpy.ndarray, shape=[n_items]
    item_factors : numpy.ndarray, shape=[n_items, r]
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Centred ratings, NaN where missing.
    regularization : float
        The users' ridge.
    clip_norm : float
        C, the bound on the norm of a user's statistics.

    Returns
    -------
    weights : numpy.ndarray, shape=[n_users]
        w_u = s_u / sqrt(k_u); 0 for a user with no rating or non-finite statistics.
    features : numpy.ndarray, shape=[n_users, r + 1]
        a_u = (1, v_u).
    residuals : numpy.ndarray, shape=[n_users, n_items]
        y_uj = x_uj - c_u on the rated items, 0 elsewhere.
    observed : numpy.ndarray of bool, shape=[n_users, n_items]
    """
    usable = ~np.isinf(ratings).any(axis=1)
    observed = ~np.isnan(ratings) & usable[:, None]
    ratings = np.where(observed, ratings, np.nan)
    biases, factors = fit_users(item_offsets, item_factors, ratings, regularization)
    features = np.concatenate([np.full((len(ratings), 1), constant), factors], axis=1)
    residuals = np.where(observed, ratings - biases[:, None], 0.0)
    counts = observed.sum(axis=1)
    squared = np.sum(features**2, axis=1)
    norms = np.sqrt((counts * squared**2 + squared * np.sum(residuals**2, axis=1))
                    / np.maximum(counts, 1))
    valid = np.isfinite(norms) & (counts > 0)
    scale = np.where(valid, np.minimum(1.0, clip_norm / np.where(valid, norms, 1.0)), 0.0)
    weights = scale / np.sqrt(np.maximum(counts, 1))
    features[~valid] = 0.0
    residuals[~valid] = 0.0
    return weights, features, residuals, observed & valid[:, None]


def user_sums(weights, features, residuals, observed):
    """The item-side sums G_j = sum_u w_u a_u a_u^T, m_j = sum_u w_u y_uj a_u of the users
    of ``clipped_user_statistics``.

    Returns
    -------
    grams : numpy.ndarray, shape=[n_items, r + 1, r + 1]
    moments : numpy.ndarray, shape=[n_items, r + 1]
    """
    n_items, width = observed.shape[1], features.shape[1]
    outer = np.einsum("ui,uk->uik", features, features).reshape(len(features), width**2)
    grams = ((observed * weights[:, None]).T @ outer).reshape(n_items, width, width)
    return grams, (residuals * weights[:, None]).T @ features


def item_statistics(item_offsets, item_factors, ratings, regularization, clip_norm,
                    constant, transform=None):
    """G_j and m_j of every user (``clipped_user_statistics``, ``user_sums``), summed block
    by block (``user_blocks``; ``transform`` as there).

    Returns
    -------
    grams : numpy.ndarray, shape=[n_items, r + 1, r + 1]
    moments : numpy.ndarray, shape=[n_items, r + 1]
    """
    n_items, width = ratings.shape[1], item_factors.shape[1] + 1
    grams, moments = np.zeros((n_items, width, width)), np.zeros((n_items, width))
    for _, block in user_blocks(ratings, transform):
        block_grams, block_moments = user_sums(*clipped_user_statistics(
            item_offsets, item_factors, block, regularization, clip_norm, constant))
        grams += block_grams
        moments += block_moments
    return grams, moments


def noisy_item_statistics(grams, moments, noise_std, rng, **stage):
    """The item-side sums G_j, m_j with N(0, noise_std^2) noise (module docstring): one
    user-level stage (``label`` and ``sensitivity`` in ``stage``) of every item's sums,
    flat, in the Frobenius norm.

    Parameters
    ----------
    grams : numpy.ndarray, shape=[n_items, r + 1, r + 1]
    moments : numpy.ndarray, shape=[n_items, r + 1]

    Returns
    -------
    grams, moments : numpy.ndarray
        Released, of the same shapes.
    """
    n_items, width = moments.shape
    noise = gaussian_noise(rng, noise_std, (n_items, width, width))
    symmetric = (noise + np.swapaxes(noise, 1, 2)) / 2
    moment_noise = gaussian_noise(rng, noise_std, (n_items, width))
    released = noisy_stage(
        np.append(grams, moments), np.append(symmetric, moment_noise), law="gaussian",
        scale=noise_std, dim=n_items * (width * (width + 1) // 2 + width),
        norm=frobenius_norm, adjacency="user_level", **stage)
    split = n_items * width**2
    return (released[:split].reshape(n_items, width, width),
            released[split:].reshape(n_items, width))


@dataclass(frozen=True)
class AlternatingLeastSquaresRelease(Mechanism):
    """DP alternating least squares: noisy item statistics, local user fits (module doc).

    Parameters
    ----------
    n_samples : int
        The public number of users (rows).
    rank : int
        r, the rank of the released item side.
    epsilon, delta : float
        The guarantee of the T + 1 releases together.
    clip_norm : float
        C, the bound on the norm of one user's statistics.
    n_iter : int
        T, the number of alternations (``default_n_iter``).
    regularization : float or None
        lambda > 0 of the users' ridge fits; None: ``default_regularization`` of the
        noise multiplier.
    half_width : float
        h, the public half-width of the centred ratings (kappa = h / 2).
    rating_range : tuple of two floats or None
        Public (low, high) the ratings are clipped to, before the offset is subtracted.
    offset : float
        The public value subtracted from every rating.
    label : str
        The estimator's name, the start of the events' labels.
    shared_releases : int
        Gaussian releases of a composite mechanism (``rank_choice``) that share the noise
        multiplier: (epsilon, delta) then covers the T + 1 + ``shared_releases`` of them
        (their events are the composite's).
    scale : AutoClip or None
        A private quantile of the users' largest |centred rating| that tightens h and C
        first (``rating_scale``; its epsilon on top of ``epsilon``); None: h and C as
        given.
    """

    adjacency: ClassVar[str] = "user_level"

    n_samples: int
    rank: int
    epsilon: float
    delta: float
    clip_norm: float
    n_iter: int
    regularization: float | None
    half_width: float
    rating_range: tuple | None = None
    offset: float = 0.0
    label: str = "PrivateMatrixCompletion"
    shared_releases: int = 0
    scale: AutoClip | None = None

    @functools.cached_property
    def noise_multiplier(self):
        """z, shared by the T + 1 Gaussian releases and ``shared_releases`` others of a
        composite release (exact Gaussian-DP composition)."""
        return calibrate_gaussian(self.epsilon, self.delta,
                                  self.n_iter + 1 + self.shared_releases)

    @property
    def ridge(self):
        """lambda of the users' fits: ``regularization``, else ``default_regularization``."""
        if self.regularization is not None:
            return self.regularization
        return default_regularization(self.noise_multiplier)

    @property
    def sensitivity(self):
        """2C: one alternation's item statistics, every item together."""
        return clipped_sum_sensitivity(self.clip_norm, 1)

    @property
    def start_sensitivity(self):
        """sqrt(2) C: the spectral start's second moment (module docstring)."""
        return math.sqrt(2) * self.clip_norm

    def _label(self, part):
        return f"{self.label} DP-ALS: {part}"

    @property
    def scale_label(self):
        return self._label("rating scale")

    def gaussian_event(self, sensitivity, label, n_steps=1):
        """A Gaussian release at z; its sensitivity stated where the scale is public."""
        if self.scale is not None:  # the sensitivity follows the released scale
            return GaussianEvent(self.noise_multiplier, n_steps=n_steps, label=label)
        return GaussianEvent.from_noise(self.noise_multiplier * sensitivity, sensitivity,
                                        n_steps=n_steps, label=label)

    def events(self):
        scale = () if self.scale is None else (scale_event(self),)
        return scale + (
            self.gaussian_event(self.start_sensitivity, self._label("spectral start")),
            self.gaussian_event(self.sensitivity, self._label("item statistics"),
                                self.n_iter))

    def release(self, data, weights, rng):
        check_user_rows(data, weights, self.n_samples, "als")
        return self.release_blocks(data, rng, functools.partial(
            centred_ratings, rating_range=self.rating_range, offset=self.offset))

    def release_blocks(self, ratings, rng, transform):
        """The release on ``ratings`` that ``transform`` clips and centres, a block of
        users at a time (``user_blocks``), after the private scale if any."""
        if self.scale is not None:  # clip_norm_ stays the public bound
            spec = tightened(self, user_blocks(ratings, transform), rng)
            return {**spec.release_blocks(ratings, rng, transform),
                    "clip_norm_": self.clip_norm}
        noise_std = self.noise_multiplier * self.sensitivity
        threshold = THRESHOLD_FACTOR * noise_std * math.sqrt(2 * (self.rank + 1))
        shrinkage = SHRINKAGE_FACTOR * noise_std
        constant = self.half_width / 2
        item_factors = noisy_spectral_start(
            ratings, self.rank, self.clip_norm,
            self.noise_multiplier * self.start_sensitivity, rng,
            transform, label=self._label("spectral start"),
            sensitivity=self.start_sensitivity)
        item_offsets = np.zeros(len(item_factors))
        for _ in range(self.n_iter):
            statistics = item_statistics(item_offsets, item_factors, ratings, self.ridge,
                                         self.clip_norm, constant, transform)
            grams, moments = noisy_item_statistics(
                *statistics, noise_std, rng, label=self._label("item statistics"),
                sensitivity=self.sensitivity)
            coefficients = solve_items(grams, moments, threshold, shrinkage)
            item_offsets = constant * coefficients[:, 0]
            released = coefficients[:, 1:]
            item_factors = scaled_basis(released)
        item_factors = released
        # a point of the Grassmannian even where the factors span fewer than r directions
        basis = np.linalg.qr(item_factors)[0]
        return {
            "estimate_": basis,
            "components_": basis.T.copy(),
            "item_factors_": item_factors,
            "item_offsets_": item_offsets,
            "noise_multiplier_": self.noise_multiplier,
            "noise_multipliers_": {"spectral start": self.noise_multiplier,
                                   "item statistics": self.noise_multiplier},
            "n_iter_": self.n_iter,
            "clip_norm_": self.clip_norm,
            "rating_scale_": self.half_width,
            "regularization_": self.ridge,
        }
