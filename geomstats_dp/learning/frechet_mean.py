"""The private Frechet mean: DP-RGD, DP-RSGD, DP-RSVRG, tangent releases or the Riemannian
Laplace mechanism, the default chosen from public quantities ("auto")."""

import warnings
from numbers import Real
from typing import ClassVar

from sklearn.utils._param_validation import Interval, StrOptions

from geomstats_dp._backend import to_backend
from geomstats_dp._validation import HasMetric, PositiveFinite
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import check_points, check_shape
from geomstats_dp.learning._gradient_methods import (
    GRADIENT_CONSTRAINTS,
    GRADIENT_FITTED,
    auto_gradient_method,
    check_all_records,
    check_cross_params,
    extrinsic_spec,
    gradient_spec,
    public_size,
    tangent_spec,
)
from geomstats_dp.learning.mechanisms.choice import (
    LAPLACE_RATIO_THRESHOLD,
    laplace_noise_ratio,
)
from geomstats_dp.learning.mechanisms.extrinsic import (
    ExtrinsicRelease,
    extrinsic_embedding,
)
from geomstats_dp.learning.mechanisms.gradient import GradientRelease
from geomstats_dp.learning.mechanisms.laplace import LaplaceRelease
from geomstats_dp.learning.mechanisms.tangent import TangentRelease, TwoStageRelease
from geomstats_dp.optim import SquaredDistanceLoss, normalize_sample_weight
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import PrivacyLeakWarning

ATOL = 1e-6  # tolerance of the check that data points lie on the space


class PrivateFrechetMean(PrivateEstimator):
    """Differentially private Frechet mean on a geomstats manifold.

    The release ``estimate_`` is (epsilon, delta)-DP under replace-one adjacency (one
    record replaced by any other point of the space; Poisson batches: add/remove).

    - method="rgd", "rsgd", "rsvrg": ``PrivateERM`` (DP Riemannian gradient descent,
      stochastic gradient descent or SVRG; its docstring states the sensitivities and
      accountants) on f(x; z) = d(x, z)^2 / 2, whose per-sample gradients -Log_x(z), of
      norm d(x, z), are clipped to ``clip_norm`` in the Riemannian norm.
    - method="tangent", "two_stage": noisy clipped tangent means at the public start, then
      (two_stage) at a coarse private estimate with a private clip radius
      (``learning.mechanisms.tangent``: sensitivity 2C/n per step, Gaussian DP).
    - method="laplace": the Riemannian Laplace mechanism (pure epsilon-DP) of Reimherr et
      al. on data in the ball B(center, radius).
    - method="extrinsic": the projected extrinsic mean (``learning.mechanisms.extrinsic``):
      the mean of the unit vectors (sphere, sensitivity 2/n) or of the clipped
      log-Euclidean or Euclidean embeddings of SPD matrices (2C/n) plus Gaussian noise,
      projected back; one release, free of the start's distance.
    - method="auto" (default): "laplace" when the ball is given, the weights are uniform
      and its expected noise is below the Gaussian release's; else, on the hypersphere,
      "extrinsic" in a band of the one-shot noise ratio; else "rgd" when the noise
      dominates, "two_stage" otherwise (``learning.mechanisms.choice``; public quantities
      only). ``method_`` records the choice.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1); "laplace" (pure DP) ignores it and accepts 0.
    method : {"auto", "rgd", "rsgd", "rsvrg", "tangent", "two_stage", "laplace", "extrinsic"}
        The release; ``method_`` records what "auto" chose.
    clip_norm : float, "auto" or None
        C, a public bound on the per-sample gradient norms d(x, z) (the data radius
        around the iterates). "auto" spends ``clip_budget_fraction`` of epsilon on a
        private ``clip_quantile`` of the distances to the initial point (see PrivateERM).
        None infers it from the data (the largest distance to the initial point) with a
        PrivacyLeakWarning.
    clip_norm_single : float, optional
        rsvrg: C1, the clip norm of the single-sample gradients; default C / 100.
    n_iter : int, optional
        Steps (rgd, rsgd) or epochs (rsvrg); default from the theory (``_defaults``).
    step_size : float or callable, optional
        Constant or schedule ``t -> eta_t``; default noise-aware (``_defaults``).
    batch_size : int, optional
        rsgd batch size (expected size for Poisson); default about sqrt(n).
    inner_steps : int, optional
        rsvrg inner steps per epoch; default n / 10.
    sampling : {"without_replacement", "poisson"}
        rsgd batch sampling (Poisson: add/remove adjacency).
    dataset_size : int, optional
        Poisson sampling only (and required there): the declared public size N.
    init_point : array-like, optional
        Data-independent start of every method; default ``center``, else a canonical
        point of the space.
    output : {"last", "random", "average", "weighted_average"}, optional
        Default "weighted_average" for rsgd, "last" otherwise.
    radius : float, optional
        r of the public ball B(center, r) holding the data: needed by "laplace" (with
        ``center``), read by "auto".
    center : array-like, optional
        The center of that ball, on the space.
    clip_quantile : float
        With ``clip_norm="auto"``: the quantile of the distances released, in (0, 1).
    clip_budget_fraction : float
        With ``clip_norm="auto"``: the fraction of epsilon spent on it, in (0, 1).
    noise_method : str
        TangentGaussian method used for the noise ("transport" by default).
    budget : PrivacyBudget, optional
        Budget to charge; default as in ``PrivateERM``.
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).
    verbose : bool
        Show a progress bar.

    Attributes
    ----------
    estimate_ : array-like, shape=[*space.shape]
        The released private mean.
    noise_multiplier_ : float
        As in ``PrivateERM``; for laplace: the Laplace scale over the sensitivity.
    n_gradient_evaluations_ : int or None
        0 for laplace, else as in ``PrivateERM``.
    budget_, noise_multipliers_, n_iter_, clip_norm_, events_, noise_ratio_
        As in ``PrivateERM`` (laplace sets no ``clip_norm_`` nor ``noise_ratio_``).
    """

    _MECHANISMS: ClassVar[dict] = {
        "rgd": GradientRelease, "rsgd": GradientRelease, "rsvrg": GradientRelease,
        "tangent": TangentRelease, "two_stage": TwoStageRelease, "laplace": LaplaceRelease,
        "extrinsic": ExtrinsicRelease}
    _FITTED = GRADIENT_FITTED
    _check_data = check_all_records
    _parameter_constraints: ClassVar[dict] = {
        **GRADIENT_CONSTRAINTS,
        "space": [HasMetric()],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "method": [StrOptions({"auto", *_MECHANISMS})],
        "radius": [PositiveFinite(), None],
        "center": ["array-like", None],
    }

    def __init__(self, space, epsilon=1.0, delta=1e-5, method="auto", clip_norm=None,
                 clip_norm_single=None, n_iter=None, step_size=None, batch_size=None,
                 inner_steps=None, sampling="without_replacement", dataset_size=None,
                 init_point=None, output=None, radius=None, center=None,
                 clip_quantile=0.5, clip_budget_fraction=0.1, noise_method="transport",
                 budget=None, random_state=None, secure=False, verbose=False):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.clip_norm = clip_norm
        self.clip_norm_single = clip_norm_single
        self.n_iter = n_iter
        self.step_size = step_size
        self.batch_size = batch_size
        self.inner_steps = inner_steps
        self.sampling = sampling
        self.dataset_size = dataset_size
        self.init_point = init_point
        self.output = output
        self.radius = radius
        self.center = center
        self.clip_quantile = clip_quantile
        self.clip_budget_fraction = clip_budget_fraction
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    def fit(self, X, y=None, sample_weight=None):
        """Release a private Frechet mean of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
            Points on the space (n_samples >= 2). A ``dask.array.Array`` is reduced
            chunk by chunk on its workers, as in ``PrivateERM.fit``.
        y : None
            Ignored.
        sample_weight : array-like, shape=[n_samples], optional
            Public non-negative weights; the sensitivity grows with the largest
            normalised weight.

        Returns
        -------
        self : PrivateFrechetMean
        """
        self._check_params()
        budget = self._start_fit(self.epsilon, self.delta)
        data, weights = self._check_input(X, None, sample_weight)
        check_cross_params(self, weights)
        n_public = public_size(self, len(data))
        method = self._choose_method(n_public)
        return self._fit_release(budget, method, self._mechanism(method, n_public, weights),
                                 data, weights)

    def _check_params(self):
        """Each parameter alone (``_parameter_constraints``), then the rules between them
        (``_gradient_methods.check_cross_params``; delta > 0 for the Gaussian methods,
        the center on the space); before any data is read."""
        self._validate_params()
        check_cross_params(self)
        if self.method != "laplace" and self.delta == 0:
            raise ValueError(f"delta must lie in (0, 1) for method={self.method!r}, got 0")
        if self.center is not None:
            check_init_point(self.space, self.center, ATOL, "center")

    def _check_input(self, X, y, sample_weight):
        """Shape-only checks of the points; returns (points, weights or None)."""
        points = check_shape(self.space, X, lazy=True)
        weights = normalize_sample_weight(sample_weight, len(points))
        self._weighted = bool(weights.max() != weights.min())  # public
        return points, weights if self._weighted else None

    def _choose_method(self, n_samples):
        """``method``; for "auto", the Laplace release where a public ball is given, the
        weights are uniform and its noise is expected to win (``mechanisms.choice``),
        else the rule of ``_gradient_methods.auto_gradient_method``."""
        if self.method != "auto":
            return self.method
        method = auto_gradient_method(self, n_samples, self._make_loss(),
                                      extrinsic_embedding(self.space) == "sphere")
        if self.radius is None or self.center is None:
            return method
        if self._weighted or self.n_iter is not None or self.step_size is not None:
            return method
        ratio = laplace_noise_ratio(self.space, n_samples, self.epsilon, self.delta,
                                    float(self.radius), to_backend(self.center))
        if ratio is not None and ratio <= LAPLACE_RATIO_THRESHOLD:
            return "laplace"
        return method

    def _make_loss(self):
        return SquaredDistanceLoss(self.space, ATOL)

    def _start_point(self):
        """``init_point``, else the public ``center``, else the canonical point."""
        if self.init_point is None and self.center is not None:
            return check_init_point(self.space, self.center, ATOL, "center")
        return check_init_point(self.space, self.init_point)

    def _mechanism(self, method, n_samples, weights):
        """The spec of ``method``'s release, from public quantities only."""
        mechanism = self._MECHANISMS[method]
        start = self._start_point()  # every method refuses a start off the space
        if mechanism is LaplaceRelease:
            if self.radius is None or self.center is None:
                raise ValueError(
                    "method='laplace' needs the public ball holding the data: pass radius "
                    "and center"
                )
            if weights is not None:
                raise ValueError("sample_weight is not supported with method='laplace'")
            return LaplaceRelease(self.space, n_samples, self.epsilon, self.radius,
                                  self.center)
        if mechanism is GradientRelease:
            return gradient_spec(self, method, n_samples, weights, self._make_loss(), start)
        if mechanism is ExtrinsicRelease:
            return extrinsic_spec(self, n_samples, weights, self._make_loss(), start)
        return tangent_spec(self, mechanism, n_samples, weights, self._make_loss(), start)

    def score(self, X, y=None, sample_weight=None):
        """Minus the mean squared distance of ``X`` to the estimate (not private).

        Emits a PrivacyLeakWarning: a loss value on the data is not covered by the budget.
        """
        warnings.warn(
            "score evaluates the loss on the data; the value is not differentially private",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        points = check_points(self.space, X, ATOL, min_samples=1)
        weights = normalize_sample_weight(sample_weight, len(points))
        squared = self.space.metric.squared_dist(to_backend(points), self.estimate_)
        return -float((to_backend(weights) * squared).sum())
