"""PrivateERM: a private minimiser of an empirical risk on a manifold.

Its parameters are checked (``_parameter_constraints``, then the cross-parameter rules of
``learning._gradient_methods``), the data's shapes checked, the method chosen by a public
rule, and the method's mechanism built from public quantities only
(``learning.mechanisms``); ``run_release`` then reserves its events, releases and spends
(``learning._base.PrivateEstimator._fit_release``).
"""

import math
from typing import ClassVar

from sklearn.utils._param_validation import StrOptions

from geomstats_dp._dask import is_dask_array
from geomstats_dp._validation import HasMetric
from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import check_array, check_sample_count
from geomstats_dp.learning._defaults import convergence_scale
from geomstats_dp.learning._gradient_methods import (
    GRADIENT_CONSTRAINTS,
    GRADIENT_FITTED,
    auto_gradient_method,
    check_all_records,
    check_cross_params,
    extrinsic_spec,
    gradient_settings,
    gradient_spec,
    optimisation_epsilon,
    public_size,
    tangent_spec,
)
from geomstats_dp.learning.mechanisms.extrinsic import ExtrinsicRelease
from geomstats_dp.learning.mechanisms.gradient import GradientRelease
from geomstats_dp.learning.mechanisms.tangent import TangentRelease, TwoStageRelease
from geomstats_dp.optim import (
    CallableLoss,
    PairedSamples,
    PerSampleLoss,
    normalize_sample_weight,
)
from geomstats_dp.optim.callable_loss import GRADIENT_KINDS
from geomstats_dp.optim.initial_point import check_init_point


class PrivateERM(PrivateEstimator):
    """Differentially private empirical risk minimisation on a geomstats manifold.

    Minimises (1/n) sum_i f(x; z_i) (or sum_i w_i f(x; z_i) with public weights) over the
    points x of ``space`` by DP Riemannian gradient descent ("rgd"), stochastic gradient
    descent ("rsgd") or SVRG ("rsvrg"), or, for a loss whose samples are points of the
    space (``SquaredDistanceLoss``, ``HuberDistanceLoss``), by noisy unit tangent steps
    from the public start ("tangent": one step; "two_stage": localised,
    ``learning.mechanisms.tangent``), and releases ``estimate_``, which is
    (epsilon, delta)-DP.

    Privacy. Adjacency: replace-one (one record z_i replaced by any other), except
    ``sampling="poisson"``: add/remove. Each per-sample Riemannian gradient is clipped to
    ``clip_norm`` C in the norm of the metric; the noisy queries have L2 sensitivity
    2C/n (rgd, a full-batch mean), 2C/b (rsgd, a batch of b drawn without replacement),
    C/b (rsgd, Poisson batches of expected size b) and 2C/n and 4 C1 (rsvrg, full and
    variance-reduced queries, Utpala et al. 2023), 2C/n per tangent step (2 C2/n for the
    refinement steps of "two_stage", C2 a private quantile). The noise is a tangent
    Gaussian N_x(0, sigma^2) at the current point, sigma calibrated numerically (autodp:
    exact Gaussian-DP composition for rgd and the tangent steps, amplification by sampling
    for rsgd; never a closed-form moments bound). Steps, schedule, start and the method
    "auto" picks are data-independent.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric; the estimate lies on it.
    loss : PerSampleLoss or callable
        A ``geomstats_dp.optim.PerSampleLoss``, or ``loss(point, sample) -> scalar`` written
        with ``geomstats.backend`` (a sample is a row of X, or the pair (x_i, y_i) when
        ``y`` is given), differentiated automatically on the autograd and pytorch
        backends, else by ``gradient`` or finite differences (with a warning).
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1).
    method : {"auto", "rgd", "rsgd", "rsvrg", "tangent", "two_stage", "extrinsic"}
        "auto" (default): "rsgd" for ``sampling="poisson"``; "rgd" for a loss whose
        samples are not points of the space or when ``n_iter`` or ``step_size`` is given;
        else "rgd" or "two_stage" by a public
        rule on n, the dimension, epsilon and delta (``learning.mechanisms.choice``);
        ``method_`` records the choice. "extrinsic" (point losses on the hypersphere or
        SPD) releases the projected extrinsic mean (``learning.mechanisms.extrinsic``),
        not the loss's minimiser: "auto" does not pick it.
    clip_norm : float, "auto" or None
        C, a public bound on the per-sample gradient norms |grad f(x; z)|_x in the
        Riemannian metric (for the squared distance: the data radius around the
        iterates). Gradients above it are scaled down, which biases the minimiser but not
        the guarantee; a float above the loss's public gradient bound (the radius of
        ``HuberDistanceLoss``) is lowered to it. "auto" releases a private ``clip_quantile`` of the per-sample
        gradient norms at the initial point (exponential mechanism on a public grid,
        ``privacy.quantile``), spending ``clip_budget_fraction`` of epsilon as its own
        pure-DP ledger event; the optimisation gets the rest. None infers C from the data
        (largest gradient norm at the initial point) with a PrivacyLeakWarning: not
        private.
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
        rsgd batch sampling.
    dataset_size : int, optional
        Poisson sampling only (and required there): the declared public dataset size N.
        Under add/remove adjacency n itself is private, so the sampling rate b / N, the
        default steps and batch size come from N, never from len(X).
    init_point : array-like, optional
        Data-independent starting point (x0 of the tangent releases); default a canonical
        point of the space.
    output : {"last", "random", "average", "weighted_average"}, optional
        Default "weighted_average" for rsgd, "last" otherwise.
    gradient : callable, optional
        With a callable ``loss``: its closed-form gradient ``gradient(point, sample)``.
    gradient_kind : {"riemannian", "euclidean"}
        What ``gradient`` returns.
    clip_quantile : float
        With ``clip_norm="auto"``: the quantile of the gradient norms released, in (0, 1).
    clip_budget_fraction : float
        With ``clip_norm="auto"``: the fraction of epsilon spent on it, in (0, 1).
    noise_method : str
        TangentGaussian method used for the noise ("transport" by default).
    budget : PrivacyBudget, optional
        Budget to charge; default the one active (``with budget:``) when the estimator
        was created or fitted, else a fresh PrivacyBudget(epsilon, delta) for this fit,
        whose releases are also recorded in the process-wide ledger
        (``geomstats_dp.privacy.get_default_budget()``).
    random_state : None, int or numpy.random.Generator
    secure : bool
        Draw the noise from the operating system's entropy (random_state must be None).
    verbose : bool
        Show a progress bar.

    Attributes
    ----------
    estimate_ : array-like, shape=[*space.shape]
        The released private minimiser.
    budget_ : PrivacyBudget
        The budget charged.
    method_ : str
        The method run ("auto" resolved).
    noise_multiplier_ : float
        Noise standard deviation of a step over the sensitivity of that step's query (for
        rsvrg: of the variance-reduced step).
    noise_multipliers_ : dict
        The same for every kind of query of the run.
    n_iter_ : int
        Manifold steps taken. For "two_stage" a function of the release (steps skipped
        once the chain has settled), as is ``n_gradient_evaluations_``.
    n_gradient_evaluations_ : int or None
        Per-sample gradient evaluations (None under Poisson sampling, where it would
        reveal the batch sizes and so n).
    clip_norm_ : float
        The clip norm used.
    events_ : tuple
        The privacy events this fit charged to ``budget_``.
    noise_ratio_ : float
        The expected norm of the release's noise displacement over the largest progress
        the clipped data can make, on the model problem |x - z|^2 / 2 with this run's
        schedule (``geomstats_dp.learning._diagnostics``); for the tangent, two-stage
        and extrinsic releases, the expected norm of the last step's noise over its
        clip radius. Public; above 1 a NoiseDominatesWarning says
        the release is expected to be no better than the data-independent start
        (threshold checked on docs/benchmarks/baselines.md).
    """

    _MECHANISMS: ClassVar[dict] = {
        "rgd": GradientRelease, "rsgd": GradientRelease, "rsvrg": GradientRelease,
        "tangent": TangentRelease, "two_stage": TwoStageRelease,
        "extrinsic": ExtrinsicRelease}
    _FITTED = GRADIENT_FITTED
    _check_data = check_all_records
    _parameter_constraints: ClassVar[dict] = {
        **GRADIENT_CONSTRAINTS,
        "space": [HasMetric()],
        "loss": [PerSampleLoss, callable],
        "method": [StrOptions({"auto", *_MECHANISMS})],
        "gradient": [callable, None],
        "gradient_kind": [StrOptions(set(GRADIENT_KINDS))],
    }

    def __init__(self, space, loss, epsilon=1.0, delta=1e-5, method="auto", clip_norm=None,
                 clip_norm_single=None, n_iter=None, step_size=None, batch_size=None,
                 inner_steps=None, sampling="without_replacement", dataset_size=None,
                 init_point=None, output=None, gradient=None, gradient_kind="riemannian",
                 clip_quantile=0.5, clip_budget_fraction=0.1, noise_method="transport",
                 budget=None, random_state=None, secure=False, verbose=False):
        self.space = space
        self.loss = loss
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
        self.gradient = gradient
        self.gradient_kind = gradient_kind
        self.clip_quantile = clip_quantile
        self.clip_budget_fraction = clip_budget_fraction
        self.noise_method = noise_method
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
        self._remember_budget()

    def fit(self, X, y=None, sample_weight=None):
        """Release a private minimiser of the empirical risk on ``X`` (and ``y``).

        Parameters
        ----------
        X : array-like, shape=[n_samples, ...]
            The records (n_samples >= 2). A ``dask.array.Array`` is reduced chunk by
            chunk on its workers, never gathered (``geomstats_dp._dask``): the workers
            belong to the data owner and read raw records, only the noisy release leaves
            the client, and the same events are charged.
        y : array-like, shape=[n_samples, ...], optional
            Targets paired with the rows of X: the loss then receives (x_i, y_i).
        sample_weight : array-like, shape=[n_samples], optional
            Public non-negative weights; the sensitivity grows with n max_i w_i.

        Returns
        -------
        self
        """
        self._check_params()
        budget = self._start_fit(self.epsilon, self.delta)
        data, weights = self._check_input(X, y, sample_weight)
        check_cross_params(self, weights)
        n_public = public_size(self, len(data))
        method = self._choose_method(n_public)
        return self._fit_release(budget, method, self._mechanism(method, n_public, weights),
                                 data, weights)

    def _check_params(self):
        """Each parameter alone (``_parameter_constraints``), then the rules between
        them (``_gradient_methods.check_cross_params``); before any data is read."""
        self._validate_params()
        check_cross_params(self)

    def _make_loss(self):
        """The PerSampleLoss minimised."""
        if isinstance(self.loss, PerSampleLoss):
            return self.loss
        return CallableLoss(self.space, self.loss, self.gradient, self.gradient_kind)

    def _check_input(self, X, y, sample_weight):
        """Shape-only checks of the data; returns (data, weights or None).

        The values are checked by the loss's ``check_data`` once the budget is checked.
        """
        data = check_array(X, "X", lazy=True)
        check_sample_count(len(data), "X")
        if y is not None:
            if is_dask_array(data):
                raise TypeError(
                    "y is not supported with a Dask array X: pass X and y in memory, or "
                    "a loss of the rows of X alone with y=None"
                )
            data = PairedSamples(data, check_array(y, "y", min_ndim=1))
        weights = None
        if sample_weight is not None:
            weights = normalize_sample_weight(sample_weight, len(data))
        return data, weights

    def _choose_method(self, n_samples):
        """``method``, or for "auto" the public rule of
        ``_gradient_methods.auto_gradient_method``."""
        if self.method != "auto":
            return self.method
        return auto_gradient_method(self, n_samples, self._make_loss())

    def _start_point(self):
        """The public start of every method: ``init_point`` (checked to lie on the
        space, ``optim.check_init_point``), else the canonical point."""
        return check_init_point(self.space, self.init_point)

    def _mechanism(self, method, n_samples, weights):
        """The spec of ``method``'s release, from public quantities only (every method
        refuses a start off the space here, before the budget)."""
        mechanism = self._MECHANISMS[method]
        if mechanism is GradientRelease:
            return self._gradient_spec(method, n_samples, weights)
        if mechanism is ExtrinsicRelease:
            return extrinsic_spec(self, n_samples, weights, self._make_loss(),
                                  self._start_point())
        return tangent_spec(self, mechanism, n_samples, weights, self._make_loss(),
                            self._start_point(), 1.0, self._convergence_scale(n_samples))

    def _convergence_scale(self, n_samples):
        """``_defaults.convergence_scale`` of the public n, d, epsilon, delta."""
        return convergence_scale(n_samples, int(self.space.dim), self.epsilon, self.delta)

    def _gradient_spec(self, method, n_samples, weights):
        """The ``GradientRelease`` of ``method`` ("rgd", "rsgd", "rsvrg"); the default
        number of DP-RGD steps lengthened by ``_convergence_scale``."""
        n_iter, *settings = gradient_settings(self, method, n_samples)
        if method == "rgd" and self.n_iter is None:
            n_iter = math.ceil(n_iter * self._convergence_scale(n_samples))
        return gradient_spec(
            self, method, n_samples, weights, self._make_loss(), self._start_point(),
            settings=(n_iter, *settings),
            epsilon=optimisation_epsilon(self), smoothness=1.0)
