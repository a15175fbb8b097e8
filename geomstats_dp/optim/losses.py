"""Per-sample losses f(x; z_i) and their Riemannian gradients at one point.

A loss is evaluated at one point x for a batch of samples and returns one value, or one
Riemannian gradient, per sample; the optimisation loop clips and combines them. What it
clips is ``tangent_gradients``: the gradients projected onto the tangent space at x
(``space.to_tangent``) before their norm is taken, so that a gradient that is not tangent
(a user's closed form, autodiff, finite differences) cannot have a small norm in the
metric and a large effect on the step. A record whose gradient raises or is not finite
counts as zero; no record's value decides an exception.
"""

import functools
import math
from abc import ABC, abstractmethod

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.spd_matrices import SPDAffineMetric

from geomstats_dp._backend import as_numpy, to_backend
from geomstats_dp._validation import check_finite_array, check_positive_finite
from geomstats_dp.distributions.membership import check_on_space
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.optim.affine_log import AffineLogSums
from geomstats_dp.optim.clipping import zero_nonfinite
from geomstats_dp.optim.closed_form_logs import OneRecordSums
from geomstats_dp.optim.euclidean_sums import MAX_DIM, EuclideanGradientSums
from geomstats_dp.optim.geodesics import log_for
from geomstats_dp.optim.gradients import conversion_for, riemannian_gradient
from geomstats_dp.optim.samples import PairedSamples
from geomstats_dp.optim.tangent_ops import AmbientTangentOps, tangent_ops_for

AUTODIFF_BACKENDS = ("autograd", "pytorch")
DIFFERENTIATIONS = ("autodiff", "finite_differences")


def backend_name():
    """Name of the active geomstats backend ("numpy", "autograd" or "pytorch")."""
    return gs.__name__.rsplit(".", 1)[-1]


class PerSampleLoss(ABC):
    """A loss f(x; z) of one sample z, with its Riemannian gradient in x.

    Parameters
    ----------
    space : Manifold
        Where x lives; its metric defines the gradient and the norm clipped in.
    """

    def __init__(self, space):
        self.space = space

    @property
    def tangent_ops(self):
        """The space's tangent projection and norm (``optim.tangent_ops``), made once."""
        ops = self.__dict__.get("_tangent_ops")
        if ops is None or ops.space is not self.space:
            ops = self._tangent_ops = tangent_ops_for(self.space)
        return ops

    def check_data(self, data):
        """Return the data as a float64 backend array [n, ...] after checking it.

        Parameters
        ----------
        data : array-like, shape=[n, ...], or PairedSamples

        Returns
        -------
        data : array-like, shape=[n, ...], or PairedSamples
        """
        if isinstance(data, PairedSamples):
            if len(data) == 0:
                raise ValueError("data must hold at least one sample, got 0 pairs")
            return data.checked()
        values = as_numpy(data)  # no copy: a fit reads the data, never writes it
        if values.ndim == 0 or values.shape[0] == 0:
            raise ValueError(f"data must hold at least one sample, got shape {values.shape}")
        check_finite_array(values, "data")
        return to_backend(values)

    @abstractmethod
    def values(self, point, data):
        """Per-sample losses f(point; z_i), shape=[k] (arguments as in ``gradients``)."""

    @abstractmethod
    def gradients(self, point, data):
        """Per-sample Riemannian gradients at ``point``.

        Parameters
        ----------
        point : array-like, shape=[*space.shape]
        data : array-like, shape=[k, ...]

        Returns
        -------
        gradients : array-like, shape=[k, *space.shape]
            Tangent at ``point`` (``tangent_gradients`` projects them anyway).
        """

    @property
    def name(self):
        """What error messages call this loss."""
        return type(self).__name__

    def tangent_gradients(self, point, data):
        """``gradients`` projected onto the tangent space at ``point``: what is clipped.

        Arguments and shape as ``gradients``. If ``gradients`` raises on the batch, the
        records are evaluated one by one and a record that raises gets a NaN gradient
        (zeroed by the clipping).
        """
        grads = self._by_record_on_failure(self.gradients, point, data)
        return self.tangent_ops.to_tangent(grads, point)

    def _by_record_on_failure(self, gradients, point, data):
        """``gradients(point, data)``; if it raises, the records one by one, with a NaN
        gradient for a record that raises."""
        try:
            return gradients(point, data)
        except Exception:  # noqa: BLE001 - a record's failure must not become an exception
            return gs.stack([self._record_gradient(gradients, point, data[i : i + 1])
                             for i in range(int(data.shape[0]))])

    def _record_gradient(self, gradients, point, record):
        try:
            return gradients(point, record)[0]
        except Exception:  # noqa: BLE001
            return gs.ones(tuple(self.space.shape)) * math.nan

    def gradient_sums(self, point):
        """Per-sample gradient norms and their weighted sums at ``point``, chunk by chunk.

        Work that depends on the point alone is done here, once per query; a loss with a
        cheaper route than ``gradients`` then ``metric.norm`` overrides this.

        Parameters
        ----------
        point : array-like, shape=[*space.shape]

        Returns
        -------
        sums : callable
            ``sums(data [k, ...]) -> (norms [k], weighted_sum)``: the Riemannian norms at
            ``point`` of the k gradients and ``weighted_sum(coefficients [k])``, the
            tangent vector sum_i c_i grad f(point; z_i) with the gradients of non-finite
            norm counted as zero.
        """
        ops = self.tangent_ops

        def sums(data):
            grads = self.tangent_gradients(point, data)
            norms = ops.norms(grads, point)
            grads = zero_nonfinite(grads, norms)
            return norms, lambda coefficients: gs.einsum("k,k...->...", coefficients, grads)

        return sums


class SquaredDistanceLoss(PerSampleLoss):
    """f(x; z) = d(x, z)^2 / 2, whose minimiser over a (weighted) sample is the Frechet mean.

    The gradient is grad f(x; z) = -Log_x(z), of norm d(x, z): clipping at C caps each
    sample's pull at C (C >= the data radius around the iterates means no clipping). With
    ``step_size=1`` and no noise, full-batch descent is the Karcher iteration
    x <- Exp_x(sum_i w_i Log_x(z_i)) of geomstats' ``FrechetMean``.

    Weights are given to ``minimize(sample_weight=...)``, which combines the clipped
    gradients as sum_i w_i clip_C(-Log_x(z_i)) with w_i summing to 1: replacing one sample
    moves this by at most 2 C max_i w_i (2C/n for uniform weights), the replace-one
    sensitivity the caller calibrates the noise to (``strategy.queries`` states it for
    every strategy).

    Parameters
    ----------
    space : Manifold
        Data points and the estimate lie on it; ``space.metric.log`` gives the gradients.
    atol : float
        Tolerance of the check that data points lie on the space.
    """

    def __init__(self, space, atol=1e-6):
        super().__init__(space)
        self.atol = check_positive_finite(atol, "atol")

    def check_data(self, data):
        """Return the data points [n, *space.shape] after checking they lie on the space."""
        points = super().check_data(data)
        shape = tuple(self.space.shape)
        if tuple(points.shape[1:]) != shape:
            raise ValueError(
                f"data must have shape [n, *{shape}], got {tuple(points.shape)}"
            )
        check_on_space(self.space, as_numpy(points), self.atol, "data")
        return points

    def values(self, point, data):
        """d(x, z_i)^2 / 2 for each sample, shape=[k]."""
        return self.space.metric.squared_dist(data, point) / 2

    def gradients(self, point, data):
        """-Log_x(z_i) for each sample, shape=[k, *space.shape] (``geodesics.log_for``)."""
        return -log_for(self.space)(data, point)

    def gradient_sums(self, point):
        """As ``PerSampleLoss.gradient_sums``; with ``affine_logs`` one ``eigh`` per
        sample gives the norms and the sums (``AffineLogSums``); on the sphere, the
        hyperboloid and Euclidean space (geomstats' metrics, unless a subclass overrides
        ``gradients``) the sums also have the closed-form one-record route
        ``clipped_one`` (``closed_form_logs``)."""
        route = self._sums_route()
        if route == "affine":
            return AffineLogSums(point, unwrap_metric(self.space.metric)[1])
        if route is not None and point.ndim == 1:
            return OneRecordSums(functools.partial(super().gradient_sums, point), point, route)
        return super().gradient_sums(point)

    def _sums_route(self):
        """"affine" (``affine_logs``), the kind of ``OneRecordSums`` ("sphere",
        "hyperboloid", "euclidean"), or None: from the space, its metric and this
        class, found once per space."""
        cached = self.__dict__.get("_route")
        if cached is not None and cached[0] is self.space:
            return cached[1]
        route = None
        if self.affine_logs():
            route = "affine"
        elif type(self).gradients is SquaredDistanceLoss.gradients:
            ops = self.tangent_ops
            if isinstance(ops, AmbientTangentOps):
                route = "sphere" if ops.sphere else "euclidean"
            elif type(self.space.metric) is HyperboloidMetric:
                route = "hyperboloid"
        self._route = (self.space, route)
        return route

    def affine_logs(self):
        """Whether ``gradient_sums`` is ``AffineLogSums``: on SPD with the affine-invariant
        metric (possibly scaled), unless a subclass overrides ``gradients``."""
        return (type(unwrap_metric(self.space.metric)[0]) is SPDAffineMetric
                and type(self).gradients is SquaredDistanceLoss.gradients)


class AutodiffLoss(PerSampleLoss):
    """A user's per-sample loss, differentiated automatically, then made Riemannian.

    Parameters
    ----------
    space : Manifold
        With a metric ``riemannian_gradient`` supports (see ``geomstats_dp.optim.gradients``).
    function : callable
        ``function(points, samples) -> losses``: points [k, *space.shape] and samples
        [k, ...] paired row by row, losses [k]; written with ``geomstats.backend`` so that
        it differentiates. It is evaluated at points of the space (and, with finite
        differences, at ambient points within ``fd_step`` of them). Functions built on
        ``eigh`` (SPD distances) have no autodiff gradient at matrices with repeated
        eigenvalues, the identity included: start elsewhere or use a closed form.
    differentiation : {"autodiff", "finite_differences"}
        "autodiff" (default) uses ``gs.autodiff.value_and_grad`` on the sum of the losses
        over the batch (one backward pass for all the per-sample gradients) and needs the
        autograd or pytorch backend; "finite_differences" (forward, one ambient coordinate
        at a time: prod(space.shape) + 1 evaluations of ``function`` on the whole batch)
        also works on numpy.
    fd_step : float
        Step of the forward differences.
    """

    def __init__(self, space, function, differentiation="autodiff", fd_step=1e-7):
        super().__init__(space)
        if not callable(function):
            raise TypeError(f"function must be callable, got {type(function).__name__}")
        if differentiation not in DIFFERENTIATIONS:
            raise ValueError(
                f"differentiation must be one of {DIFFERENTIATIONS}, got {differentiation!r}"
            )
        if differentiation == "autodiff" and backend_name() not in AUTODIFF_BACKENDS:
            raise ValueError(
                f"differentiation='autodiff' needs the {' or '.join(AUTODIFF_BACKENDS)} "
                f"backend (GEOMSTATS_BACKEND), the active one is {backend_name()!r}; "
                "pass differentiation='finite_differences' to differentiate numerically"
            )
        conversion_for(space)  # unsupported metric: TypeError now, not mid-run
        self.function = function
        self.differentiation = differentiation
        self.fd_step = check_positive_finite(fd_step, "fd_step")

    @property
    def name(self):
        """The function's name."""
        return getattr(self.function, "__qualname__", type(self).__name__)

    def _repeat(self, point, n_samples):
        return gs.repeat(gs.expand_dims(point, 0), n_samples, axis=0)

    def values(self, point, data):
        """function(x, z_i) for each sample, shape=[k]."""
        return self.function(self._repeat(point, data.shape[0]), data)

    def euclidean_gradients(self, point, data):
        """Gradients in the ambient coordinates, shape=[k, *space.shape]."""
        points = self._repeat(point, data.shape[0])
        if self.differentiation == "autodiff":
            summed = lambda pts: gs.sum(self.function(pts, data))
            _, grads = gs.autodiff.value_and_grad(summed, point_ndims=points.ndim)(points)
            return grads
        return self._finite_differences(points, data)

    def _finite_differences(self, points, data):
        return forward_differences(lambda at: self.function(at, data), points,
                                   tuple(self.space.shape), self.fd_step)

    def gradients(self, point, data):
        """Riemannian gradients for each sample, shape=[k, *space.shape]."""
        return riemannian_gradient(self.space, self.euclidean_gradients(point, data), point)

    def gradient_sums(self, point):
        """As ``PerSampleLoss.gradient_sums``; on spaces of at most ``MAX_DIM`` ambient
        coordinates the Euclidean gradients are converted, and their norms taken, through
        one matrix at ``point`` (``EuclideanGradientSums``): the same tangent vectors and
        norms, without a conversion and a metric evaluation per sample (unless
        ``gradients`` is overridden)."""
        if math.prod(self.space.shape) > MAX_DIM or not self._derived_gradients():
            return super().gradient_sums(point)
        return EuclideanGradientSums(
            self.space, point,
            lambda data: self._by_record_on_failure(self.euclidean_gradients, point, data),
        )

    def _derived_gradients(self):
        """Whether ``gradients`` converts ``euclidean_gradients``."""
        return type(self).gradients is AutodiffLoss.gradients


def forward_differences(evaluate, at, shape, step):
    """Forward differences of ``evaluate`` along each ambient coordinate of the points.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(at) -> [k]`` values.
    at : array-like, shape=[*shape] or [k, *shape]
        Where to differentiate (one point for every value, or one point per value).
    shape : tuple
        The space's shape.
    step : float

    Returns
    -------
    gradients : array-like, shape=[k, *shape]
        prod(shape) + 1 calls of ``evaluate``.
    """
    base = evaluate(at)
    columns = []
    for unit in np.eye(int(np.prod(shape))):
        shifted = evaluate(at + to_backend(unit.reshape(shape) * step))
        columns.append((shifted - base) / step)
    return gs.reshape(gs.stack(columns, axis=-1), (int(base.shape[0]),) + shape)
