"""A plain per-sample loss ``loss(point, sample)``, evaluated on whole batches when it can.

A user writes the loss of one record at one point. Calling it once per record costs a
Python call per record and step; most such functions, written with ``geomstats.backend``,
also accept a batch of records. ``CallableLoss`` finds out on public dummy records
(``geomstats_dp.optim.dummy``) which of three forms gives the same numbers as calls on
single records, and uses the cheapest:

- one point and a batch of records, ``loss(point, samples [k, ...]) -> [k]``: values,
  closed-form gradients, finite differences and, for small matrix points, the Jacobian
  at the point (all rows share the point): by the complex step (``complex_step``) where
  it gives the exact Jacobian on the dummy records, on d copies of the point for
  d <= ``COMPLEX_COPIES_MAX_DIM`` where the loss also broadcasts those,
  ``loss(copies [d, 1, *space.shape], samples [k, ...]) -> [d, k]``, else (autograd
  only) at the one point; otherwise on pytorch from the d copies in one forward-mode
  pass (``copies_jacobian``), and by reverse over reverse mode (``point_jacobian``);
- paired rows, ``loss(points [k, *space.shape], samples [k, ...]) -> [k]``: what
  automatic differentiation of the sum over a batch of replicated points needs;
- one call per record, the fallback.

Derived gradients on spaces of at most ``MAX_DIM`` ambient coordinates are clipped and
summed through the conversion's matrix at the point (``EuclideanGradientSums``).

These decisions, taken on dummy records at the first point a loss is evaluated at (a
run's public start), are shared by every ``CallableLoss`` of the same callables, space,
metric, settings and backend whose first point is the same (``shared_decisions``): a
new estimator's fit does not try them again. The key holds public quantities only.
"""

import math
import warnings

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import as_numpy, to_backend
from geomstats_dp._validation import check_positive_finite
from geomstats_dp.optim.complex_step import (
    complex_step_jacobian,
    complex_step_matches,
    complex_warnings_silenced,
)
from geomstats_dp.optim.dummy import DUMMY_SEED, dummy_points, dummy_records, row_shapes
from geomstats_dp.optim.euclidean_sums import MAX_DIM
from geomstats_dp.optim.gradients import conversion_for, riemannian_gradient
from geomstats_dp.optim.losses import (
    AUTODIFF_BACKENDS,
    AutodiffLoss,
    PerSampleLoss,
    backend_name,
    forward_differences,
)
from geomstats_dp.optim.point_jacobian import (
    FORWARD_MODE_BACKENDS,
    copies_jacobian,
    point_jacobian,
)
from geomstats_dp.optim.shared_decisions import decisions_for
from geomstats_dp.optim.user_calls import (
    batch_argument,
    record_value,
    same_as_records,
    untracked,
)

GRADIENT_KINDS = ("riemannian", "euclidean")
_ONE_POINT, _PAIRED_ROWS, _POINT_COPIES = "one point", "paired rows", "point copies"
# the complex step (``complex_step``) at the one point, and on copies of it
_COMPLEX_STEP, _COMPLEX_COPIES = "complex step", "complex step on copies"
# The complex step at the one point (d one-point calls): autograd only. On pytorch they
# took 0.45-0.47 and 0.96-1.03 ms a step on SPD(2) (gradient sums, 1,000 and 10,992
# records), 1.5 and 10-11 ms on SPD(4), against 0.34-0.37, 0.65-0.73, 0.49 and 2.3-2.7 ms
# for forward mode on the copies.
COMPLEX_POINT_BACKENDS = ("autograd",)
# Largest prod(space.shape) with the complex step on copies: their arrays are d times the
# batch's. Autograd: on SPD(2) (d = 4) the copies took 0.15 and 0.98 ms a step (1,000 and
# 10,992 records) against 0.21 and 1.02 ms for d one-point calls; on SPD(3) 0.31 and
# 3.7 ms against 0.42 and 2.6 ms, on SPD(4) 0.60 and 7.9 ms against 0.81 and 6.0 ms.
# Pytorch, against forward mode on the copies: SPD(2) 0.31-0.32 and 0.61-0.65 ms against
# 0.34-0.37 and 0.65-0.73 ms; SPD(3) 0.36-0.39 and 1.12-1.37 ms against 0.39-0.42 and
# 1.18-1.22 ms; SPD(4) 0.47-0.48 and 2.4-2.8 ms against 0.49 and 2.3-2.7 ms.
COMPLEX_COPIES_MAX_DIM = 4
CHECK_STEP = 1e-5  # central differences that check the Jacobian at one point


class CallableLoss(AutodiffLoss):
    """A plain per-sample loss ``loss(point, sample)``, made a PerSampleLoss.

    The callable takes one point [*space.shape] and one sample (a row of X, or the pair
    (x_i, y_i) when the data are ``PairedSamples``) and returns a scalar, written with
    ``geomstats.backend``. Its gradient is, in order of preference, the closed form
    ``gradient(point, sample)`` if given, automatic differentiation on the autograd and
    pytorch backends (the Jacobian at the one point of a batch, for matrix points of at
    most ``MAX_DIM`` entries: the complex step where it checks out on the dummy
    records (``_jacobian_route``), else ``copies_jacobian`` on pytorch, else
    ``point_jacobian``; else the gradient of the sum over the batch of replicated
    points), or forward finite differences (numpy; prod(space.shape) + 1 evaluations on
    the batch per step, with a warning).

    Batches. For each shape of the records, the callable (and ``gradient``) is first
    tried on public dummy records at the first point it is evaluated at (a run's start;
    module docstring): a form that returns the values of calls on single records (to
    1e-9) is used from then on; a batch of pairs is passed as the tuple (X, y). An
    exception on the dummy records propagates (it depends on no data value). On data,
    a batched call that raises falls back to calls record by record, and a record whose
    call raises gets a NaN value and gradient: its clipped contribution is zero. The
    decisions are shared with the losses of the same callables, space, metric, settings
    and backend first evaluated at the same point (``shared_decisions``).

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
                "step; pass a closed-form gradient or use the autograd or pytorch backend "
                "(GEOMSTATS_BACKEND)",
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
        self._forms = None  # (form, output shape, record shapes) -> decision
        self._strict = False  # raise a record's failure (dummy records only)

    @property
    def name(self):
        """The callable's name."""
        return getattr(self.sample_function, "__qualname__", type(self).__name__)

    def values(self, point, data):
        """loss(point, z_i) for each sample, shape=[k]."""
        return self._at_point(self.sample_function, point, data, ())

    def gradients(self, point, data):
        """Gradients for each sample, shape=[k, *space.shape] (``tangent_gradients``
        projects a user's "riemannian" gradients onto the tangent space)."""
        if self.gradient is None:
            return super().gradients(point, data)  # tries the dummy records first
        self._try_on_dummy_records(point, data)
        grads = self._at_point(self.gradient, point, data, tuple(self.space.shape))
        if self.gradient_kind == "euclidean":
            return riemannian_gradient(self.space, grads, point)
        return grads

    def _derived_gradients(self):
        """Whether ``gradients`` converts ``euclidean_gradients`` (no closed form)."""
        return self.gradient is None

    def euclidean_gradients(self, point, data):
        """Derived gradients in the ambient coordinates, shape=[k, *space.shape]: forward
        differences of one-point batched calls (numpy), the Jacobian of one-point batched
        calls (``point_jacobian``) where it pays and agrees, else autodiff on paired rows."""
        self._try_on_dummy_records(point, data)
        if self.differentiation == "finite_differences":
            return forward_differences(lambda at: self.values(at, data), point,
                                       tuple(self.space.shape), self.fd_step)
        route = self._jacobian_route(point, data)
        if route is None:
            return super().euclidean_gradients(point, data)
        return self._jacobian(route, point, data)

    def _jacobian(self, route, point, data):
        """The Jacobian at ``point`` by ``route`` (``_jacobian_route``)."""
        if route == _POINT_COPIES:
            return copies_jacobian(lambda copies: self._on_points(copies, data), point)
        if route in (_COMPLEX_STEP, _COMPLEX_COPIES):
            return self._complex_step(route, point, data)
        return point_jacobian(lambda at: self.values(at, data), point)

    def _complex_step(self, route, point, data):
        """The complex-step Jacobian (``complex_step_jacobian``), NaN for the records of
        non-finite (real) value, where the complex extension is no derivative (log of a
        negative number). A batched call that raises propagates (records one by one:
        ``_by_record_on_failure``); the complex calls show no floating-point warning nor
        one of a cast to real (``complex_warnings_silenced``; the real call, as on every
        route, shows its warnings)."""
        values = self.values(point, data)
        with complex_warnings_silenced():
            grads = complex_step_jacobian(lambda at: self._on_points(at, data), point,
                                          copies=route == _COMPLEX_COPIES)
        # 0 times a value is 0 where it is finite, NaN where it is NaN or infinite
        return grads + gs.reshape(0.0 * values, (-1,) + (1,) * gs.ndim(point))

    def _loss_rows(self, points, samples):
        """The callable on paired rows (what autodiff differentiates): [k] losses."""
        return self._on_rows(self.sample_function, points, samples, ())

    def _at_point(self, function, point, samples, shape):
        """``function`` at one point for every record, [k, *shape]."""
        if self._agrees(_ONE_POINT, function, point, samples, shape):
            out = self._batched_call(function, point, samples, shape)
            if out is not None:
                return out
        return self._on_rows(function, self._repeat(point, samples.shape[0]), samples,
                             shape)

    def _on_rows(self, function, points, samples, shape):
        """``function`` on paired rows, [k, *shape]: one call if it broadcasts."""
        if self._agrees(_PAIRED_ROWS, function, points[0], samples, shape):
            out = self._batched_call(function, points, samples, shape)
            if out is not None:
                return out
        return gs.stack([record_value(function, points[i], samples[i], shape, self._strict)
                         for i in range(int(points.shape[0]))])

    def _on_points(self, points, samples):
        """The callable at one point [*space.shape], or at copies of points
        [c, 1, *space.shape], for every record: [k], or [c, k]; ValueError if it returns
        another shape."""
        out = self.sample_function(points, batch_argument(samples))
        copies = tuple(points.shape[:gs.ndim(points) - len(self.space.shape)])[:1]
        expected = copies + (int(samples.shape[0]),)
        if tuple(gs.shape(out)) != expected:
            raise ValueError(f"loss {self.name} returned shape {tuple(gs.shape(out))} for "
                             f"points of shape {tuple(points.shape)} and {expected[-1]} "
                             f"records, expected {expected}")
        return out

    def _batched_call(self, function, points, samples, shape):
        """One call on the batch; None if it raises or has the wrong shape (on data)."""
        try:
            out = function(points, batch_argument(samples))
        except Exception:  # a record's failure: go record by record
            if self._strict:
                raise
            return None
        return out if tuple(gs.shape(out)) == (int(samples.shape[0]),) + shape else None

    def _decided(self, key, point, decide):
        """The decision ``key``: ``decide(point)`` at the first point it is asked at, with
        ``point`` a plain public array; the decisions are shared (``_decisions``)."""
        forms = self._decisions(point)
        if key not in forms:
            forms[key] = decide(to_backend(as_numpy(untracked(point))))
        return forms[key]

    def _decisions(self, point):
        """This loss's decisions: those shared (``shared_decisions``) by the losses of its
        class, backend, space, metric, callables, settings and first point (public)."""
        if self._forms is None:
            start = as_numpy(untracked(point))
            self._forms = decisions_for((
                type(self), backend_name(), self.space, self.space.metric,
                self.sample_function, self.gradient, self.gradient_kind, self.fd_step,
                start.shape, start.dtype.str, start.tobytes()))
        return self._forms

    def _agrees(self, form, function, point, samples, shape):
        """Whether ``form`` gives the record-by-record values, decided on dummy records."""

        def decide(point):
            dummy = dummy_records(self.space, samples, point)
            points = dummy_points(self.space, point, int(dummy.shape[0]))
            batched_points = points if form == _PAIRED_ROWS else points[0]
            if form == _ONE_POINT:
                points = self._repeat(points[0], dummy.shape[0])
            return same_as_records(function, batched_points, points, dummy, shape)

        return self._decided((form, shape, row_shapes(samples)), point, decide)

    def _copies_agree(self, point, data):
        """Whether the callable broadcasts copies of points [c, 1, *space.shape] against
        the records ([c, k], row j the one-point call at copy j), decided on dummy
        records at dummy points (to 1e-9)."""

        def decide(point):
            dummy = dummy_records(self.space, data, point)
            points = dummy_points(self.space, point)
            expected = np.stack([as_numpy(self.sample_function(at, batch_argument(dummy)))
                                 for at in points])
            try:
                copies = as_numpy(self._on_points(gs.expand_dims(points, 1), dummy))
            except Exception:  # noqa: BLE001 - it does not broadcast the copies
                return False
            return bool(np.isfinite(expected).any()) and np.allclose(
                copies, expected, rtol=1e-9, atol=1e-12, equal_nan=True)

        return self._decided((_POINT_COPIES, row_shapes(data)), point, decide)

    def _jacobian_route(self, point, data):
        """How autodiff takes the Jacobian at one point: ``_POINT_COPIES``
        (``copies_jacobian``), ``_COMPLEX_COPIES`` or ``_COMPLEX_STEP`` (the complex
        step on copies or at the point, ``_complex_step``), ``_ONE_POINT``
        (``point_jacobian``), or None (replicated points, ``AutodiffLoss``).

        Decided once per record shape on dummy records: for matrix points with at most
        ``MAX_DIM`` entries, a callable that broadcasts at one point (and, for the
        copies, copies of it) and whose Jacobian there gives its derivative: along a
        tangent vector for ``point_jacobian`` and ``copies_jacobian`` (pytorch;
        ``_jacobian_matches``), or, for the complex step, that of an exact route to 1e-9
        (``_complex_step_checks``), tried first: on copies for d <=
        ``COMPLEX_COPIES_MAX_DIM``, else at the point on ``COMPLEX_POINT_BACKENDS``. The
        rule depends on the backend and public shapes only, never on the batch size (a
        private quantity under Poisson sampling). The Jacobian at one point pays when
        the loss does work on the point alone that replicated points repeat for every
        record (an inverse, a determinant); on vectors (a logistic loss, no such work)
        its d reverse passes cost more than they save (timings:
        docs/benchmarks/optimizers.md, "Plain-function losses"). The complex
        step makes the same d columns plain numpy calls, without autograd's tracing, and
        plain complex tensor calls on pytorch, without forward mode's dual tensors.
        """

        def decide(point):
            shape = tuple(self.space.shape)
            if (len(shape) != 2 or math.prod(shape) > MAX_DIM
                    or not self._agrees(_ONE_POINT, self.sample_function, point, data, ())):
                return None
            name = backend_name()
            small = math.prod(shape) <= COMPLEX_COPIES_MAX_DIM
            copies = ((small or name in FORWARD_MODE_BACKENDS)
                      and self._copies_agree(point, data))
            route = _COMPLEX_COPIES if copies and small else _COMPLEX_STEP
            if ((route == _COMPLEX_COPIES or name in COMPLEX_POINT_BACKENDS)
                    and self._complex_step_checks(route, point, data)):
                return route
            if (name in FORWARD_MODE_BACKENDS and copies
                    and self._jacobian_matches(_POINT_COPIES, point, data)):
                return _POINT_COPIES
            return _ONE_POINT if self._jacobian_matches(_ONE_POINT, point, data) else None

        return self._decided(("jacobian", row_shapes(data)), point, decide)

    def _jacobian_matches(self, route, point, data):
        """Whether the Jacobian by ``route`` runs on dummy records shaped like ``data``
        and, along a public tangent vector v, gives the central differences of the
        one-point calls, (f(x + h v) - f(x - h v)) / 2h with h = ``CHECK_STEP``, to 1e-6
        (their error is h^2 |f'''| / 6; a Jacobian that misses a term is off by far
        more)."""
        dummy = dummy_records(self.space, data, point)
        direction = self.space.to_tangent(to_backend(np.random.default_rng(
            DUMMY_SEED).standard_normal(tuple(self.space.shape))), point)
        try:
            jacobian = as_numpy(self._jacobian(route, point, dummy))
            ahead = as_numpy(self.values(point + CHECK_STEP * direction, dummy))
            behind = as_numpy(self.values(point - CHECK_STEP * direction, dummy))
        except Exception:  # noqa: BLE001 - the replicated points are then used
            return False
        along = jacobian.reshape(jacobian.shape[0], -1) @ as_numpy(direction).ravel()
        differences = (ahead - behind) / (2 * CHECK_STEP)
        if not np.isfinite(differences).any():
            return False
        return bool(np.allclose(along, differences, rtol=1e-6, equal_nan=True,
                                atol=1e-6 * np.nanmax(np.abs(differences))))

    def _complex_step_checks(self, route, point, data):
        """Whether the complex step by ``route`` gives the exact Jacobian on dummy records
        shaped like ``data``, at ``point`` and at the dummy points (``complex_step_matches``:
        complex values, no exception or warning, to 1e-9). The reference is forward mode
        on the copies on pytorch (``copies_jacobian``), else ``point_jacobian``: both
        exact, the first without the imports of torch's batched reverse passes.

        A loss that is complex-analytic at these points but not on the branches that
        data take (``where`` or a Python ``if`` on values choosing ``abs`` or a cast to
        real) is not caught: its gradients there are then wrong, but still clipped, so
        the privacy guarantee holds and only the fit suffers.
        """
        copies = route == _COMPLEX_COPIES
        reference = (_POINT_COPIES if copies and backend_name() in FORWARD_MODE_BACKENDS
                     else _ONE_POINT)
        dummy = dummy_records(self.space, data, point)
        for at in [point, *dummy_points(self.space, point)]:
            try:
                exact = as_numpy(self._jacobian(reference, at, dummy))
            except Exception:  # noqa: BLE001 - no reference: not the complex step
                return False
            if not complex_step_matches(lambda x: self._on_points(x, dummy), at, exact,
                                        copies=copies):
                return False
        return True

    def _try_on_dummy_records(self, point, data):
        """Once per record shape, compute the gradients of dummy records at ``point``
        with failures raised: an exception there (autodiff included) reads no data."""
        if self._strict:
            return

        def decide(point):
            self._strict = True
            try:
                self.gradients(point, dummy_records(self.space, data, point))
            finally:
                self._strict = False
            return True

        self._decided(("gradients", row_shapes(data)), point, decide)
