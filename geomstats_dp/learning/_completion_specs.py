"""The release specs of ``PrivateMatrixCompletion``, built from its public parameters.

Each function reads the estimator's parameters (public quantities only: the rating range,
the offset, the clip norm, epsilon and delta) and the public number of users, and returns
a mechanism spec (``learning.mechanisms``); none reads a rating.
"""

import functools

import numpy as np

from geomstats_dp._backend import to_backend
from geomstats_dp.distributions.grassmann_bases import GrassmannBases
from geomstats_dp.learning._completion_loss import MatrixCompletionLoss
from geomstats_dp.learning._local_completion import centred_ratings
from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
    default_n_iter,
)
from geomstats_dp.learning.mechanisms.clip_bound import AutoClip
from geomstats_dp.learning.mechanisms.gradient import GradientRelease, Preliminary
from geomstats_dp.learning.mechanisms.item_means import ItemMeansRelease

GRADIENT_REGULARIZATION = 1e-3


def start_basis(n_items, rank):
    """A fixed random orthonormal basis [n_items, rank] (seed 0): data-independent, and
    not a coordinate basis (whose items may be exactly unrated)."""
    return np.linalg.qr(np.random.default_rng(0).standard_normal((n_items, rank)))[0]


def _centred_run_data(rating_range, offset, data, rng):
    """The gradient run's data: the ratings clipped to the range and centred (a
    per-user map, no release)."""
    return to_backend(centred_ratings(data, rating_range, offset)), {}, None


def public_offset(params):
    """The public centre of the ratings: ``offset``, else the range's middle, else 0."""
    if params.offset is not None:
        return float(params.offset)
    if params.rating_range is not None:
        return (float(params.rating_range[0]) + float(params.rating_range[1])) / 2
    return 0.0


def gradient_regularization(params):
    """lambda of the gradient methods (the ALS release resolves its own default)."""
    if params.regularization is not None:
        return float(params.regularization)
    return GRADIENT_REGULARIZATION


def als_clip_norm(params):
    """C of the ALS release: ``clip_norm``, else the default of ``rating_range``."""
    if params.clip_norm is not None:
        return float(params.clip_norm)
    return float(np.sqrt(3 / 8) * half_width(params) ** 2)


def half_width(params):
    """h: the largest distance of the public range's ends from the offset; without a
    range, the ALS clip norm C stands for sqrt(3/8) h^2 (the default's relation)."""
    if params.rating_range is None:
        return float(np.sqrt(als_clip_norm(params) / np.sqrt(3 / 8)))
    low, high = (float(b) for b in params.rating_range)
    return max(high - public_offset(params), public_offset(params) - low)


def private_scale(params):
    """The private rating scale where no public range gives it (``clip_quantile``)."""
    if params.rating_range is None and params.clip_quantile is not None:
        return AutoClip(params.clip_quantile, params.clip_budget_fraction * params.epsilon)
    return None


def als_spec(params, n_users):
    """The DP-ALS spec: the private scale where no public range gives it, then T + 1
    Gaussian releases on the rest of epsilon."""
    scale = private_scale(params)
    epsilon = params.epsilon - (scale.epsilon if scale else 0.0)
    return AlternatingLeastSquaresRelease(
        n_samples=n_users, rank=params.rank, epsilon=epsilon, delta=params.delta,
        clip_norm=als_clip_norm(params), scale=scale,
        n_iter=params.n_iter or default_n_iter(epsilon, params.delta),
        regularization=params.regularization, half_width=half_width(params),
        rating_range=params.rating_range, offset=public_offset(params),
        label=type(params).__name__)


def means_spec(params, n_users):
    """The item means' spec: the private scale where no public range gives it, then one
    Gaussian release on the rest of epsilon."""
    scale = private_scale(params)
    return ItemMeansRelease(
        n_samples=n_users, epsilon=params.epsilon - (scale.epsilon if scale else 0.0),
        delta=params.delta, half_width=half_width(params),
        clip_norm=als_clip_norm(params), rating_range=params.rating_range,
        offset=public_offset(params), label=type(params).__name__, scale=scale)


def gradient_spec(params, n_samples, n_items):
    """The gradient release on the Grassmannian."""
    space = GrassmannBases(n_items, params.rank)
    return GradientRelease(
        space=space, loss=MatrixCompletionLoss(space, gradient_regularization(params)),
        n_samples=n_samples, epsilon=params.epsilon, delta=params.delta,
        method=params.method, n_iter=params.n_iter, clip_norm=params.clip_norm,
        init_point=start_basis(n_items, params.rank), step_size=params.step_size,
        batch_size=params.batch_size, inner_steps=params.inner_steps,
        sampling=params.sampling, output=params.output, noise_method=params.noise_method,
        # the curvature of f is of the order of the gradient bound C
        smoothness=float(params.clip_norm) if params.clip_norm else 1.0,
        label=type(params).__name__, verbose=params.verbose,
        preliminary=Preliminary((), functools.partial(
            _centred_run_data, params.rating_range, public_offset(params))))
