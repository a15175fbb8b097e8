"""Per-sample losses f(x; z_i) and their Riemannian gradients at one point.

A loss is evaluated at one point x for a batch of samples and returns one value, or one
Riemannian gradient, per sample; the optimisation loop clips and combines them. What it
clips is ``tangent_gradients``: the gradients projected onto the tangent space at x
(``space.to_tangent``) before their norm is taken, so that a gradient that is not tangent
(a user's closed form, autodiff, finite differences) cannot have a small norm in the
metric and a large effect on the step. A record whose gradient raises or is not finite
counts as zero; no record's value decides an exception.
"""

import math
import warnings
from abc import ABC, abstractmethod

import geomstats.backend as gs
import numpy as np
from geomstats.geometry.spd_matrices import SPDAffineMetric

from geomstats_dp._backend import as_numpy, to_backend
from geomstats_dp._validation import (
    check_finite_array,
    check_on_space,
    check_positive_finite,
)
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.optim.affine_log import AffineLogSums
from geomstats_dp.optim.clipping import zero_nonfinite
from geomstats_dp.optim.dummy import dummy_points, dummy_records, row_shapes
from geomstats_dp.optim.gradients import conversion_for, riemannian_gradient
from geomstats_dp.optim.samples import PairedSamples

AUTODIFF_BACKENDS = ("autograd", "pytorch")
DIFFERENTIATIONS = ("autodiff", "finite_differences")
GRADIENT_KINDS = ("riemannian", "euclidean")


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

        If ``gradients`` raises on the batch, the records are evaluated one by one and a
        record that raises gets a NaN gradient (zeroed by the clipping).

        Parameters
        ----------
        point : array-like, shape=[*space.shape]
        data : array-like, shape=[k, ...]

        Returns
        -------
        gradients : array-like, shape=[k, *space.shape]
        """
        try:
            grads = self.gradients(point, data)
        except Exception:  # noqa: BLE001 - a record's failure must not become an exception
            grads = gs.stack([self._record_gradient(point, data[i : i + 1])
                              for i in range(int(data.shape[0]))])
        return self.space.to_tangent(grads, point)

    def _record_gradient(self, point, record):
        try:
            return self.gradients(point, record)[0]
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
        metric = self.space.metric

        def sums(data):
            grads = self.tangent_gradients(point, data)
            norms = metric.norm(grads, point)
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
        """-Log_x(z_i) for each sample, shape=[k, *space.shape]."""
        return -self.space.metric.log(data, point)

    def gradient_sums(self, point):
        """As ``PerSampleLoss.gradient_sums``; on SPD with the affine-invariant metric
        (possibly scaled) one ``eigh`` per sample gives the norms and the sums
        (``AffineLogSums``), unless a subclass overrides ``gradients``."""
        metric, scale = unwrap_metric(self.space.metric)
        if type(metric) is SPDAffineMetric and (
            type(self).gradients is SquaredDistanceLoss.gradients
        ):
            return AffineLogSums(point, scale)
        return super().gradient_sums(point)


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
            summed = lambda pts: gs.sum(self.function(pts, data))  # noqa: E731
            _, grads = gs.autodiff.value_and_grad(summed, point_ndims=points.ndim)(points)
            return grads
        return self._finite_differences(points, data)

    def _finite_differences(self, points, data):
        shape = tuple(self.space.shape)
        base = self.function(points, data)
        columns = []
        for unit in np.eye(int(np.prod(shape))):
            step = to_backend(unit.reshape(shape) * self.fd_step)
            columns.append((self.function(points + step, data) - base) / self.fd_step)
        return gs.reshape(gs.stack(columns, axis=-1), (points.shape[0],) + shape)

    def gradients(self, point, data):
        """Riemannian gradients for each sample, shape=[k, *space.shape]."""
        return riemannian_gradient(self.space, self.euclidean_gradients(point, data), point)


class CallableLoss(AutodiffLoss):
    """A plain per-sample loss ``loss(point, sample)``, made a PerSampleLoss.

    The callable takes one point [*space.shape] and one sample (a row of X, or the pair
    (x_i, y_i) when the data are ``PairedSamples``) and returns a scalar, written with
    ``geomstats.backend``. Its gradient is, in order of preference, the closed form
    ``gradient(point, sample)`` if given, automatic differentiation on the autograd and
    pytorch backends (of the sum over the batch), or forward finite differences (numpy;
    prod(space.shape) + 1 evaluations per step, with a warning about their cost).

    Batches. For each shape of the records, the callable (and ``gradient``) is first
    tried on a public dummy batch (``geomstats_dp.optim.dummy``) at the first point it is
    evaluated at (a run's start): if ``loss(points [k, *space.shape], samples [k, ...])``
    returns the k values that k calls on single rows return, it broadcasts over paired
    rows and every later evaluation is one call on the batch (a pair of samples is then
    the tuple (X_batch, y_batch)); otherwise it is called row by row. An exception on the
    dummy batch propagates (it depends on no data value). On data, a batched call that
    raises falls back to calls row by row, and a record whose call raises gets a NaN
    value and gradient: its clipped contribution is zero.

    Parameters
    ----------
    space : Manifold
    function : callable
        ``function(point, sample) -> scalar``.
    gradient : callable, optional
        ``gradient(point, sample) -> array [*space.shape]``: the closed-form gradient.
    gradient_kind : {"riemannian", "euclidean"}
        What ``gradient`` returns: the Riemannian gradient (projected onto the tangent
        space at ``point`` before it is clipped, ``tangent_gradients``), or the gradient
        in the ambient coordinates, converted by ``riemannian_gradient``.
    fd_step : float
        Step of the finite differences.
    """

    def __init__(self, space, function, gradient=None, gradient_kind="riemannian",
                 fd_step=1e-7):
        if not callable(function):
            raise TypeError(f"loss must be callable, got {type(function).__name__}")
        if gradient is not None and not callable(gradient):
            raise TypeError(f"gradient must be callable, got {type(gradient).__name__}")
        if gradient_kind not in GRADIENT_KINDS:
            raise ValueError(
                f"gradient_kind must be one of {GRADIENT_KINDS}, got {gradient_kind!r}"
            )
        autodiff = backend_name() in AUTODIFF_BACKENDS
        if gradient is None and not autodiff:
            warnings.warn(
                f"the {backend_name()!r} backend cannot differentiate the loss: finite "
                f"differences cost {int(np.prod(space.shape)) + 1} loss evaluations per "
                "sample and step; pass a closed-form gradient or use the autograd or "
                "pytorch backend (GEOMSTATS_BACKEND)",
                UserWarning,
                stacklevel=3,
            )
        if gradient is None or gradient_kind == "euclidean":
            conversion_for(space)  # unsupported metric: TypeError now, not mid-run
        PerSampleLoss.__init__(self, space)
        self.function = self._loss_rows
        self.differentiation = "autodiff" if autodiff else "finite_differences"
        self.fd_step = check_positive_finite(fd_step, "fd_step")
        self.sample_function = function
        self.gradient = gradient
        self.gradient_kind = gradient_kind
        self._broadcasts = {}  # (output shape, record shapes) -> bool
        self._strict = False  # raise a row's failure (dummy records only)

    @property
    def name(self):
        """The callable's name."""
        return getattr(self.sample_function, "__qualname__", type(self).__name__)

    def _loss_rows(self, points, samples):
        """The callable on paired rows: [k] losses."""
        return self._rows(self.sample_function, points, samples, ())

    def gradients(self, point, data):
        """Gradients for each sample, shape=[k, *space.shape] (``tangent_gradients``
        projects a user's "riemannian" gradients onto the tangent space)."""
        self._try_on_dummy_records(point, data)
        if self.gradient is None:
            return super().gradients(point, data)
        points = self._repeat(point, data.shape[0])
        grads = self._rows(self.gradient, points, data, tuple(self.space.shape))
        if self.gradient_kind == "euclidean":
            return riemannian_gradient(self.space, grads, point)
        return grads

    def _rows(self, function, points, samples, shape):
        """``function`` on paired rows, [k, *shape]: one call if it broadcasts."""
        n_rows = int(points.shape[0])
        if self._broadcast(function, points[0], samples, shape):
            try:
                batched = function(points, _batch(samples))
            except Exception:  # noqa: BLE001 - a record's failure: go row by row
                batched = None
            if batched is not None and tuple(gs.shape(batched)) == (n_rows,) + shape:
                return batched
        return gs.stack([_row(function, points[i], samples[i], shape, self._strict)
                         for i in range(n_rows)])

    def _try_on_dummy_records(self, point, data):
        """Once per record shape, compute the gradients of dummy records at ``point``
        with failures raised: an exception there (autodiff included) reads no data."""
        key = ("gradients", row_shapes(data))
        if key in self._broadcasts or self._strict:
            return
        self._strict = True
        try:
            point = to_backend(as_numpy(_untracked(point)))
            self.gradients(point, dummy_records(self.space, data, point))
        finally:
            self._strict = False
        self._broadcasts[key] = True

    def _broadcast(self, function, point, samples, shape):
        """Whether ``function`` broadcasts over paired rows, decided on dummy records."""
        key = (shape, row_shapes(samples))
        if key not in self._broadcasts:
            point = to_backend(as_numpy(_untracked(point)))
            self._broadcasts[key] = _broadcasts_over_rows(
                function, dummy_points(self.space, point),
                dummy_records(self.space, samples, point), shape,
            )
        return self._broadcasts[key]


def _batch(samples):
    """What a broadcasting callable receives for a batch of samples."""
    if isinstance(samples, PairedSamples):
        return samples.X, samples.y
    return samples


def _untracked(array):
    """The value under autograd's tracing boxes (torch tensors are detached by as_numpy)."""
    while hasattr(array, "_value"):
        array = array._value
    return array


def _row(function, point, sample, shape, strict=False):
    """``function(point, sample)`` reshaped to ``shape``; NaN if the call raises (the
    exception itself if ``strict``)."""
    try:
        value = function(point, sample)
    except Exception:  # noqa: BLE001 - a record's failure is zeroed, never raised
        if strict:
            raise
        return gs.ones(shape) * math.nan
    return gs.reshape(value, shape)


def _broadcasts_over_rows(function, points, dummy, shape):
    """Whether one call on the dummy rows (points [k, ...] paired with records [k, ...])
    gives the row-by-row values (to 1e-9).

    Row-by-row calls that raise propagate: they read no data value.
    """
    rows = np.stack([np.reshape(as_numpy(function(points[i], dummy[i])), shape)
                     for i in range(int(dummy.shape[0]))])
    try:
        batched = as_numpy(function(points, _batch(dummy)))
    except Exception:  # noqa: BLE001 - it does not broadcast
        return False
    return (batched.shape == rows.shape and bool(np.isfinite(rows).any())
            and np.allclose(batched, rows, rtol=1e-9, atol=1e-12, equal_nan=True))
