"""The private Frechet mean: DP-RGD, DP-RSGD, DP-RSVRG, tangent releases or the Riemannian
Laplace mechanism, the default chosen from public quantities ("auto")."""

import warnings

from geomstats_dp._backend import to_backend
from geomstats_dp._validation import check_positive_finite
from geomstats_dp.learning._data import check_points, check_shape
from geomstats_dp.learning.erm import GRADIENT_FITTED, PrivateERM
from geomstats_dp.learning.mechanisms.choice import (
    LAPLACE_RATIO_THRESHOLD,
    laplace_noise_ratio,
)
from geomstats_dp.learning.mechanisms.laplace import LaplaceRelease
from geomstats_dp.optim import SquaredDistanceLoss, normalize_sample_weight
from geomstats_dp.optim.initial_point import check_init_point
from geomstats_dp.privacy import PrivacyLeakWarning

ATOL = 1e-6  # tolerance of the check that data points lie on the space


class PrivateFrechetMean(PrivateERM):
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
    - method="auto" (default): "laplace" when the ball is given, the weights are uniform
      and its expected noise is below the Gaussian release's; else "rgd" when the noise
      dominates, "two_stage" otherwise (``learning.mechanisms.choice``; public quantities
      only). ``method_`` records the choice.

    Parameters
    ----------
    space : Manifold
        A geomstats space with a metric.
    epsilon : float
        Privacy parameter of this release, > 0.
    delta : float
        In (0, 1); ignored by "laplace" (pure DP).
    method : {"auto", "rgd", "rsgd", "rsvrg", "tangent", "two_stage", "laplace"}
    clip_norm : float, "auto" or None
        C, a public bound on the per-sample gradient norms d(x, z) (the data radius
        around the iterates). "auto" spends ``clip_budget_fraction`` of epsilon on a
        private ``clip_quantile`` of the distances to the initial point (see PrivateERM).
        None infers it from the data (the largest distance to the initial point) with a
        PrivacyLeakWarning.
    radius, center : float and array-like
        The public ball B(center, radius) holding the data: needed by "laplace", read by
        "auto"; ``center`` is also the start of every method when ``init_point`` is None.
    clip_norm_single, n_iter, step_size, batch_size, inner_steps, sampling, dataset_size,
    init_point, output, clip_quantile, clip_budget_fraction, noise_method, budget,
    random_state, secure, verbose
        As in ``PrivateERM`` (defaults for the squared distance: ``_defaults``).

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

    _MECHANISMS = {**PrivateERM._MECHANISMS, "laplace": LaplaceRelease}
    _FITTED = GRADIENT_FITTED

    def __init__(self, space, epsilon=1.0, delta=1e-5, method="auto", clip_norm=None,
                 clip_norm_single=None, n_iter=None, step_size=None, batch_size=None,
                 inner_steps=None, sampling="without_replacement", dataset_size=None,
                 init_point=None, output=None, radius=None, center=None,
                 clip_quantile=0.5, clip_budget_fraction=0.1, noise_method="transport",
                 budget=None, random_state=None, secure=False, verbose=False):
        super().__init__(
            space, None, epsilon=epsilon, delta=delta, method=method, clip_norm=clip_norm,
            clip_norm_single=clip_norm_single, n_iter=n_iter, step_size=step_size,
            batch_size=batch_size, inner_steps=inner_steps, sampling=sampling,
            dataset_size=dataset_size, init_point=init_point, output=output,
            clip_quantile=clip_quantile, clip_budget_fraction=clip_budget_fraction,
            noise_method=noise_method, budget=budget, random_state=random_state,
            secure=secure, verbose=verbose,
        )
        del self.loss, self.gradient, self.gradient_kind  # not parameters of this estimator
        self.radius = radius
        self.center = center

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
        return super().fit(X, None, sample_weight)

    def _make_loss(self):
        return SquaredDistanceLoss(self.space, ATOL)

    def _check_input(self, X, y, sample_weight):
        points = check_shape(self.space, X, lazy=True)
        weights = normalize_sample_weight(sample_weight, len(points))
        self._weighted = bool(weights.max() != weights.min())  # public
        return points, weights if self._weighted else None

    def _choose_method(self, n_samples):
        """As ``PrivateERM``; "auto" with a public ball and uniform weights takes the
        Laplace release where it is expected to win (``mechanisms.choice``)."""
        method = super()._choose_method(n_samples)
        if self.method != "auto" or self.radius is None or self.center is None:
            return method
        if self._weighted or self.n_iter is not None or self.step_size is not None:
            return method
        ratio = laplace_noise_ratio(self.space, n_samples, self.epsilon, self.delta,
                                    check_positive_finite(self.radius, "radius"),
                                    to_backend(self.center))
        if ratio is not None and ratio <= LAPLACE_RATIO_THRESHOLD:
            return "laplace"
        return method

    def _check_params(self):
        super()._check_params()
        if self.center is not None:
            self._check_center()

    def _start_point(self):
        """``init_point``, else the public ``center``, else the canonical point."""
        if self.init_point is None and self.center is not None:
            return check_init_point(self.space, self.center, ATOL, "center")
        return super()._start_point()

    def _check_center(self):
        """The Laplace ball's center: shape, finite, on the space (errors name it)."""
        check_init_point(self.space, self.center, ATOL, "center")

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
