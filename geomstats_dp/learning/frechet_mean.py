"""The private Frechet mean: DP-RGD, DP-RSGD, DP-RSVRG or the Riemannian Laplace mechanism."""

import warnings

from sklearn.base import BaseEstimator
from tqdm.auto import tqdm

from geomstats_dp._backend import get_rng, to_backend
from geomstats_dp._validation import (
    check_positive_finite,
    check_positive_int,
    check_probability,
)
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.tangent_gaussian import METHODS as NOISE_METHODS
from geomstats_dp.learning import _defaults
from geomstats_dp.learning._data import check_points, check_shape
from geomstats_dp.learning._gradient_plan import plan_gradient_release
from geomstats_dp.optim import (
    OUTPUTS,
    SquaredDistanceLoss,
    canonical_point,
    minimize,
    normalize_sample_weight,
)
from geomstats_dp.privacy import PrivacyLeakWarning, current_budget, resolve_budget

METHODS = ("rgd", "rsgd", "rsvrg", "laplace")
SAMPLINGS = ("without_replacement", "poisson")
ATOL = 1e-6  # tolerance of the check that data points lie on the space
FITTED = ("estimate_", "budget_", "noise_multiplier_", "noise_multipliers_", "n_iter_",
          "n_gradient_evaluations_", "clip_norm_", "events_")


class PrivateFrechetMean(BaseEstimator):
    """Differentially private Frechet mean on a geomstats manifold.

    The release ``estimate_`` is (epsilon, delta)-DP under replace-one adjacency (one
    record replaced by any other point of the space; Poisson batches: add/remove).

    - method="rgd", "rsgd", "rsvrg": DP Riemannian gradient descent, stochastic gradient
      descent or SVRG on f(x; z) = d(x, z)^2 / 2, per-sample gradients -Log_x(z) clipped
      to ``clip_norm`` in the Riemannian norm, tangent-Gaussian noise calibrated by the
      numerical accountant (DP-RGD: sensitivity 2C max_i w_i per step, exact Gaussian-DP
      composition; DP-RSGD: 2C n max_i w_i / b, amplification by sampling; DP-RSVRG:
      2C/n and 4C, 000 Claim 3), data-independent start and schedule.
    - method="laplace": the Riemannian Laplace mechanism (pure epsilon-DP) of Reimherr et
      al. on data in the ball B(center, radius).

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1); ignored by "laplace" (pure DP).
    method : {"rgd", "rsgd", "rsvrg", "laplace"}
    clip_norm : float, optional
        C, a public bound on the per-sample gradient norms d(x, z). None infers it from
        the data (the largest distance to the initial point) with a PrivacyLeakWarning.
    clip_norm_single : float, optional
        rsvrg: C1, the clip norm of the single-sample gradients; default C / 100.
    n_iter : int, optional
        Steps (rgd, rsgd) or epochs (rsvrg); default from the theory (``_defaults``).
    step_size : float or callable, optional
        Constant or schedule ``t -> eta_t``; default 0.5 s (rgd), 1/(t + 1/s^2) (rsgd),
        0.5 s / m (rsvrg), with s = C / sqrt(C^2 + d sigma^2) (see ``_defaults``).
    batch_size : int, optional
        DP-RSGD batch size; default about sqrt(n).
    inner_steps : int, optional
        DP-RSVRG inner steps per epoch m; default n / 10.
    sampling : {"without_replacement", "poisson"}
        DP-RSGD batch sampling.
    init_point : array-like, optional
        Data-independent starting point; default a canonical point of the space.
    output : {"last", "random", "average", "weighted_average"}, optional
        Default "weighted_average" for rsgd, "last" otherwise.
    radius, center : float and array-like
        "laplace" only: the public ball B(center, radius) holding the data.
    noise_method : str
        TangentGaussian method used for the noise ("transport" by default).
    budget : PrivacyBudget, optional
        Budget to charge; default the one active (``with budget:``) when the estimator
        was created or fitted, else a fresh PrivacyBudget(epsilon, delta).
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).
    verbose : bool
        Show a progress bar.

    Attributes
    ----------
    estimate_ : array-like, shape=[*space.shape]
        The released private mean.
    budget_ : PrivacyBudget
        The budget charged.
    noise_multiplier_ : float
        Noise standard deviation of a step over the sensitivity of that step's query (for
        rsvrg: of the variance-reduced step; for laplace: Laplace scale over sensitivity).
    noise_multipliers_ : dict
        The same for every kind of query of the run.
    n_iter_ : int
        Manifold steps taken.
    n_gradient_evaluations_ : int
        Per-sample gradient evaluations (0 for laplace).
    clip_norm_ : float
        The clip norm used (rgd, rsgd, rsvrg).
    events_ : tuple
        The privacy events this fit charged to ``budget_``.
    """

    def __init__(self, space, epsilon=1.0, delta=1e-5, method="rgd", clip_norm=None,
                 clip_norm_single=None, n_iter=None, step_size=None, batch_size=None, inner_steps=None,
                 sampling="without_replacement", init_point=None, output=None,
                 radius=None, center=None, noise_method="transport", budget=None,
                 random_state=None, secure=False, verbose=False):
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
        self.init_point = init_point
        self.output = output
        self.radius = radius
        self.center = center
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._creation_budget = current_budget()

    def fit(self, X, y=None, sample_weight=None):
        """Release a private Frechet mean of ``X``.

        Parameters
        ----------
        X : array-like, shape=[n_samples, *space.shape]
            Points on the space (n_samples >= 2).
        y : None
            Ignored.
        sample_weight : array-like, shape=[n_samples], optional
            Public non-negative weights; the sensitivity grows with the largest
            normalised weight.

        Returns
        -------
        self : PrivateFrechetMean
        """
        for name in FITTED:
            self.__dict__.pop(name, None)
        self._check_params()
        points = check_shape(self.space, X)
        weights = normalize_sample_weight(sample_weight, len(points))
        budget = resolve_budget(self.budget or self._creation_budget, self.epsilon,
                                self.delta)
        if self.method == "laplace":
            from geomstats_dp.learning._laplace_release import fit_laplace

            fitted = fit_laplace(self, points, weights, budget)
        else:
            fitted = self._fit_gradient(points, weights, budget)
        fitted["budget_"] = budget
        for name, value in fitted.items():
            setattr(self, name, value)
        return self

    def _check_params(self):
        """Validate the parameters (before any data is read)."""
        if not hasattr(self.space, "metric"):
            raise TypeError(f"space {type(self.space).__name__} has no metric")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_positive_finite(self.epsilon, "epsilon")
        if self.method != "laplace":
            check_probability(self.delta, "delta")
        for name in ("clip_norm", "clip_norm_single"):
            if getattr(self, name) is not None:
                check_positive_finite(getattr(self, name), name)
        if self.n_iter is not None:
            check_positive_int(self.n_iter, "n_iter")
        for name in ("batch_size", "inner_steps"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), name)
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.output is not None and self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {self.output!r}")
        if self.secure and self.random_state is not None:
            raise ValueError(
                "secure=True draws from the operating system's entropy; "
                f"random_state must be None, got {self.random_state!r}"
            )
        if self.noise_method not in NOISE_METHODS:
            raise ValueError(
                f"noise_method must be one of {NOISE_METHODS}, got {self.noise_method!r}"
            )

    def _settings(self, n_samples):
        """Resolved n_iter, batch size, inner steps and output."""
        batch_size = self.batch_size or _defaults.default_batch_size(n_samples)
        inner_steps = self.inner_steps or _defaults.default_inner_steps(n_samples)
        n_iter = self.n_iter or _defaults.default_n_iter(
            self.method, n_samples, int(self.space.dim), self.epsilon, self.delta
        )
        output = self.output or _defaults.default_output(self.method)
        return n_iter, batch_size, inner_steps, output

    def _fit_gradient(self, points, weights, budget):
        """DP-RGD / DP-RSGD / DP-RSVRG: calibrate, check the budget, run, charge."""
        n_iter, batch_size, inner_steps, output = self._settings(len(points))
        if self.method == "rsgd" and self.sampling == "poisson" and weights.ptp() > 0:
            raise ValueError(
                "sample_weight is not supported with Poisson sampling: adding or removing "
                "a record changes every normalised weight"
            )

        def plan(clip_norm):
            clip_norm_single = self.clip_norm_single or (
                _defaults.SVRG_SINGLE_CLIP_RATIO * clip_norm
            )
            return plan_gradient_release(
                self.method, self.epsilon, self.delta, weights, n_iter, clip_norm,
                batch_size, inner_steps, clip_norm_single, self.sampling,
            )

        release = plan(self.clip_norm or 1.0)  # the noise multipliers do not depend on C
        budget.check(*release.events)
        # the values are checked by ``minimize`` (SquaredDistanceLoss.check_data) before use
        init_point = canonical_point(self.space) if self.init_point is None else self.init_point
        clip_norm = self.clip_norm
        if clip_norm is None:
            clip_norm = self._infer_clip_norm(points, init_point)
            release = plan(clip_norm)
        step_size = self.step_size or _defaults.default_step_size(
            self.method, inner_steps, clip_norm, release.strategy.noise_stds,
            int(self.space.dim),
        )
        rng = get_rng(self.random_state, secure=self.secure)
        n_steps = n_iter * (inner_steps if self.method == "rsvrg" else 1)
        progress = tqdm(total=n_steps, desc=f"PrivateFrechetMean ({self.method})",
                        disable=not self.verbose)
        result = minimize(
            SquaredDistanceLoss(self.space), to_backend(points), release.strategy, n_iter,
            step_size, init_point, sample_weight=weights, output=output,
            random_state=rng,
            noise_sampler=TangentGaussian(self.space, self.noise_method, validate=False),
            callback=lambda step, point: progress.update(),
        )
        progress.close()
        budget.spend(*release.events)
        multipliers = release.noise_multipliers
        return {
            "estimate_": result.point,
            "noise_multiplier_": list(multipliers.values())[-1],
            "noise_multipliers_": multipliers,
            "n_iter_": result.n_steps,
            "n_gradient_evaluations_": result.n_gradient_evaluations,
            "clip_norm_": clip_norm,
            "events_": release.events,
        }

    def _infer_clip_norm(self, points, init_point):
        """Largest distance from the initial point to the data, with a leak warning."""
        warnings.warn(
            "clip_norm was inferred from the data (largest distance to the initial point); "
            "this bound is not private. Pass a public clip_norm.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        distances = self.space.metric.dist(to_backend(points), to_backend(init_point))
        return float(max(distances.max(), 1e-12))

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
