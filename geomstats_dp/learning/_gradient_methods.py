"""The gradient and tangent methods of an estimator that minimises a loss.

``PrivateERM`` and ``PrivateFrechetMean`` each take these methods' parameters in their
own constructors (``GRADIENT_CONSTRAINTS`` states each once). The functions here read
them from the estimator (public parameters only), apply the cross-parameter rules, resolve
the defaults and build the specs: ``mechanisms.GradientRelease`` ("rgd", "rsgd", "rsvrg")
``mechanisms.TangentRelease`` / ``TwoStageRelease`` ("tangent", "two_stage") and
``mechanisms.ExtrinsicRelease`` ("extrinsic").
"""

from sklearn.utils._param_validation import StrOptions

from geomstats_dp._dask import check_records
from geomstats_dp._validation import (
    BUDGET,
    CLIP_NORM,
    PROBABILITY,
    RANDOM_STATE,
    PositiveFinite,
    PositiveInt,
)
from geomstats_dp.distributions.tangent_gaussian import METHODS as NOISE_METHODS
from geomstats_dp.learning import _defaults
from geomstats_dp.learning._gradient_plan import FAMILIES
from geomstats_dp.learning.mechanisms.choice import choose_point_method
from geomstats_dp.learning.mechanisms.clip_bound import AutoClip
from geomstats_dp.learning.mechanisms.extrinsic import ExtrinsicRelease
from geomstats_dp.learning.mechanisms.gradient import GradientRelease
from geomstats_dp.optim import OUTPUTS, SquaredDistanceLoss

SAMPLINGS = ("without_replacement", "poisson")
GRADIENT_FITTED = ("estimate_", "budget_", "method_", "noise_multiplier_", "noise_multipliers_",
                   "n_iter_", "n_gradient_evaluations_", "clip_norm_", "events_",
                   "noise_ratio_")

GRADIENT_CONSTRAINTS = {
    "epsilon": [PositiveFinite()],
    "delta": PROBABILITY,
    "clip_norm": CLIP_NORM,
    "clip_norm_single": [PositiveFinite(), None],
    "n_iter": [PositiveInt(), None],
    "step_size": [PositiveFinite(), callable, None],
    "batch_size": [PositiveInt(), None],
    "inner_steps": [PositiveInt(), None],
    "sampling": [StrOptions(set(SAMPLINGS))],
    "dataset_size": [PositiveInt(), None],
    "init_point": ["array-like", None],
    "output": [StrOptions(set(OUTPUTS)), None],
    "clip_quantile": PROBABILITY,
    "clip_budget_fraction": PROBABILITY,
    "noise_method": [StrOptions(set(NOISE_METHODS))],
    "budget": BUDGET,
    "random_state": RANDOM_STATE,
    "secure": ["boolean"],
    "verbose": ["verbose"],
}


def is_auto_clip(clip_norm):
    """Whether ``clip_norm`` asks for a private quantile ("auto")."""
    return isinstance(clip_norm, str) and clip_norm == "auto"


def is_poisson(method, sampling):
    """Poisson batches: a batched family (or "auto", which then runs "rsgd") with Poisson
    sampling."""
    batched = method == "auto" or (method in FAMILIES and FAMILIES[method].batched)
    return batched and sampling == "poisson"


def check_cross_params(estimator, weights=None):
    """The rules between parameters, checked after each one alone and before any data
    value is read; errors name the parameters.

    Parameters
    ----------
    estimator : PrivateERM or PrivateFrechetMean
    weights : numpy.ndarray or None
        The normalised public weights (None: uniform).
    """
    est = estimator
    if est.secure and est.random_state is not None:
        raise ValueError(
            "secure=True draws from the operating system's entropy; "
            f"random_state must be None, got {est.random_state!r}"
        )
    if not is_poisson(est.method, est.sampling):
        return
    if est.dataset_size is None:
        raise ValueError(
            "sampling='poisson' is analysed under add/remove adjacency, where the dataset "
            "size is private: pass dataset_size, a declared public size, from which the "
            "sampling rate and the defaults are computed"
        )
    if est.batch_size is not None and est.batch_size > est.dataset_size:
        raise ValueError(
            f"batch_size must be <= dataset_size={est.dataset_size}, got {est.batch_size}"
        )
    if weights is not None:
        raise ValueError(
            "sample_weight is not supported with Poisson sampling: adding or removing a "
            "record changes every normalised weight"
        )


def check_all_records(estimator, X, y=None):
    """Check every record of (X, y) as ``fit`` does (an error names the record's index in
    X); the private search checks its whole data with it before any run. Bound as the
    ``_check_data`` method of the estimators of a loss."""
    data, _ = estimator._check_input(X, y, None)
    check_records(estimator._make_loss(), data)


def public_size(estimator, n_records):
    """n as the mechanisms see it: the declared ``dataset_size`` under Poisson sampling
    (where n itself is private), else the number of records."""
    if is_poisson(estimator.method, estimator.sampling):
        return estimator.dataset_size
    return n_records


def auto_gradient_method(estimator, n_samples, loss, extrinsic=False):
    """"auto" for a loss: "rsgd" under Poisson sampling; "rgd" when gradient-descent
    settings (n_iter, step_size) are given or the samples are not points of the space;
    else the public rule of ``mechanisms.choice`` on n, the dimension, epsilon, delta
    (``extrinsic``: whether "extrinsic" is a candidate)."""
    est = estimator
    if est.sampling == "poisson":
        return "rsgd"
    point_loss = isinstance(loss, SquaredDistanceLoss)
    if not point_loss or est.n_iter is not None or est.step_size is not None:
        return "rgd"
    return choose_point_method(n_samples, int(est.space.dim), est.epsilon, est.delta,
                               extrinsic)


def travel_radius(estimator):
    """The user's float ``clip_norm`` (the distance the minimiser of a point loss may lie
    from the start, read by the reach diagnostic even where ``clip_spec`` lowers the clip
    norm), else None."""
    clip_norm = estimator.clip_norm
    return None if clip_norm is None or is_auto_clip(clip_norm) else clip_norm


def clip_spec(estimator, loss=None):
    """``clip_norm`` as a mechanism takes it: a float, ``AutoClip`` or None.

    A float C is lowered to the loss's public gradient bound D where it has one (the
    ``radius`` of ``HuberDistanceLoss``, whose gradients have norm min(d(x, z), D)):
    clipping at C > D changes no gradient but calibrates the noise to C.
    """
    est = estimator
    if is_auto_clip(est.clip_norm):
        return AutoClip(est.clip_quantile, est.epsilon * est.clip_budget_fraction)
    bound = getattr(loss, "radius", None)
    if est.clip_norm is not None and bound is not None:
        return min(est.clip_norm, bound)
    return est.clip_norm


def optimisation_epsilon(estimator):
    """Epsilon left to the noisy steps once the automatic clip norm is paid."""
    est = estimator
    if is_auto_clip(est.clip_norm):
        return est.epsilon * (1 - est.clip_budget_fraction)
    return est.epsilon


def gradient_settings(estimator, method, n_samples):
    """Resolved (n_iter, batch_size, inner_steps, output) of ``method``: the parameters,
    else the defaults of ``learning._defaults`` (public quantities only)."""
    est = estimator
    batch_size = est.batch_size or _defaults.default_batch_size(n_samples)
    inner_steps = est.inner_steps or _defaults.default_inner_steps(n_samples)
    n_iter = est.n_iter or _defaults.default_n_iter(
        method, n_samples, int(est.space.dim), est.epsilon, est.delta)
    output = est.output or _defaults.default_output(method)
    return n_iter, batch_size, inner_steps, output


def gradient_spec(estimator, method, n_samples, weights, loss, start, settings=None,
                  epsilon=None, smoothness=1.0, **rules):
    """The ``GradientRelease`` of ``method`` for the estimator's parameters.

    Parameters
    ----------
    estimator : PrivateERM or PrivateFrechetMean
    method : {"rgd", "rsgd", "rsvrg"}
    n_samples : int
        The public n (``public_size``).
    weights : numpy.ndarray or None
    loss : PerSampleLoss
    start : array-like, shape=[*space.shape]
        The checked public start.
    settings : tuple, optional
        (n_iter, batch_size, inner_steps, output); default ``gradient_settings``.
    epsilon : float, optional
        The noisy steps' epsilon; default ``optimisation_epsilon``.
    smoothness : float
    **rules
        ``preliminary``, ``step_rule``, ``ratio_rule`` of ``GradientRelease``.

    Returns
    -------
    mechanism : GradientRelease
    """
    est = estimator
    n_iter, batch_size, inner_steps, output = (
        settings or gradient_settings(est, method, n_samples))
    return GradientRelease(
        space=est.space, loss=loss, n_samples=n_samples,
        epsilon=optimisation_epsilon(est) if epsilon is None else epsilon,
        delta=est.delta, method=method, n_iter=n_iter, clip_norm=clip_spec(est, loss),
        init_point=start, step_size=est.step_size, batch_size=batch_size,
        inner_steps=inner_steps, clip_norm_single=est.clip_norm_single,
        sampling=est.sampling, output=output, weights=weights,
        noise_method=est.noise_method, smoothness=smoothness, label=type(est).__name__,
        verbose=est.verbose, travel_radius=travel_radius(est), **rules)


def tangent_spec(estimator, mechanism, n_samples, weights, loss, start, smoothness=1.0,
                 horizon_scale=1.0):
    """The tangent release ``mechanism`` (``TangentRelease`` or ``TwoStageRelease``) for
    the estimator's parameters (arguments as in ``gradient_spec``; ``horizon_scale`` as
    in ``TangentSteps``)."""
    est = estimator
    return mechanism(
        space=est.space, loss=loss, n_samples=n_samples, epsilon=est.epsilon,
        delta=est.delta, steps_epsilon=optimisation_epsilon(est),
        clip_norm=clip_spec(est, loss),
        init_point=start, weights=weights, noise_method=est.noise_method,
        smoothness=smoothness, label=type(est).__name__, horizon_scale=horizon_scale,
        travel_radius=travel_radius(est))


def extrinsic_spec(estimator, n_samples, weights, loss, start):
    """The ``ExtrinsicRelease`` for the estimator's parameters (arguments as in
    ``gradient_spec``)."""
    est = estimator
    return ExtrinsicRelease(
        space=est.space, loss=loss, n_samples=n_samples, epsilon=est.epsilon,
        delta=est.delta, steps_epsilon=optimisation_epsilon(est), clip_norm=clip_spec(est),
        init_point=start, weights=weights, label=type(est).__name__)
