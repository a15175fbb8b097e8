"""Tangent Gaussians moved by geomstats' own parallel transport, for metrics without a
registered closed-form transport.

A standard draw is made at a fixed, data-independent reference point in an orthonormal
basis computed once (``orthonormal_basis``, Gram-Schmidt in the metric) and moved to each
base point by ``metric.parallel_transport`` along the geodesic from the reference point.
Parallel transport is a linear isometry T_ref -> T_w, so the draw is exactly N_w(0, I).

Metrics it serves (geomstats 2.8), and how geomstats transports:

- ``BiInvariantMetric`` (SO(n) as matrices) and ``SpecialEuclideanMatricesCanonicalLeftMetric``
  (SE(n) as matrices): closed form, one geodesic symmetry (pole ladder, exact on these
  symmetric spaces);
- ``PullbackDiffeoMetric`` whose image metric transports in closed form (e.g.
  ``PreShapeMetric``, the pre-shape space pulled back from the sphere): closed form;
- ``KendallShapeMetric``: geomstats integrates the transport ODE of Guigui et al. (2021)
  (RK4, ``KENDALL_N_STEPS`` = 200 steps); the transported basis is orthonormal to about
  1e-11 (1.5e-10 with geomstats' default 100; tested to 1e-9), and the
  result lands at the representative of the shape aligned with the reference, so it is
  rotated onto the given representative.

On SO(n) and SE(n) the geodesic's initial velocity (the log) comes from a real Schur
decomposition (``FAST_LOGS``) instead of geomstats' scipy ``logm``, which dominated the
transport's cost; the transport itself is geomstats' (timings: docs/benchmarks/sampling.md,
"Parallel transport where no closed form is registered").

Not served (they stay on Gram-Schmidt): the general left-invariant metrics (an ODE in the
Lie algebra, RK4 with 10 steps by default: an orthonormal basis of SO(3) with metric
diag(1, 2, 3) at the identity came out orthonormal to 4e-7 only, 3e-11 with 100 steps, and
the log needs an optimisation), the metrics of the registered families (Euclidean, sphere,
...) except as pullback images, and the HPD metrics (complex matrices; the samplers draw
real float64 arrays).

Cut locus: the geodesic from the reference point must reach the base point, i.e. the base
point must lie in the injectivity domain of the reference point (on SO(n), rotations by an
angle below pi from the reference). For each base point ``exp_ref(log_ref(w))`` is compared
with ``w``; where they differ the draw goes through a second reference point (a fixed point
at geodesic distance 1 from the first), a composition of two parallel transports and still
an isometry. A base point at the cut locus of both raises ``ValueError``. The route taken
depends on the base point, but the law of the draw does not.
"""

import math
import warnings

import numpy as np
from geomstats.geometry.euclidean import EuclideanMetric
from geomstats.geometry.grassmannian import GrassmannianCanonicalMetric
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.hypersphere import HypersphereMetric
from geomstats.geometry.invariant_metric import BiInvariantMetric
from geomstats.geometry.pre_shape import KendallShapeMetric, PreShapeSpace
from geomstats.geometry.pullback_metric import PullbackDiffeoMetric
from geomstats.geometry.spd_matrices import SPDAffineMetric
from geomstats.geometry.special_euclidean import SpecialEuclideanMatricesCanonicalLeftMetric
from scipy import linalg

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions.base import IsometricTransport
from geomstats_dp.distributions.baselines.basis import combine
from geomstats_dp.distributions.baselines.gram_schmidt import orthonormal_basis

CLOSED_FORM_METRICS = (  # served directly: the first two; the others as pullback images
    BiInvariantMetric,
    SpecialEuclideanMatricesCanonicalLeftMetric,
    EuclideanMetric,
    HypersphereMetric,
    HyperboloidMetric,
    GrassmannianCanonicalMetric,
    SPDAffineMetric,
)
"""Metric classes whose geomstats ``parallel_transport`` is a closed form."""

REFERENCE_SEED = 20231
"""Seed of the fixed (data-independent) reference points where no identity exists."""

REACH_RTOL = 1e-9
"""Relative gap ``|exp_ref(log_ref(w)) - w|`` above which w counts as at the cut locus."""

KENDALL_N_STEPS = 200
"""RK4 steps of geomstats' Kendall transport: isometric to about 1e-11 at distance 1.2
(1.5e-10 with geomstats' default of 100 steps)."""

SECOND_REFERENCE_DISTANCE = 1.0
"""Geodesic distance from the reference point to the second one (the detour)."""


def has_exact_parallel_transport(metric):
    """Whether geomstats' ``metric.parallel_transport`` is an exact isometry.

    Closed forms (``CLOSED_FORM_METRICS``), pullbacks of them, and Kendall's shape metric
    (an RK4 integration isometric to about 1e-11, see the module docstring).
    """
    if isinstance(metric, (KendallShapeMetric,) + CLOSED_FORM_METRICS):
        return True
    if isinstance(metric, PullbackDiffeoMetric):
        return has_exact_parallel_transport(metric.image_space.metric)
    return False


def _real(array):
    """Real part of a backend array as float64 numpy (scipy's matrix logarithm returns
    complex values near a rotation by pi; a wrong log is caught by the reach test)."""
    if hasattr(array, "detach"):
        array = array.detach().cpu().numpy()
    return np.real(np.asarray(array)).astype(np.float64)


def _rotation_logs(rotations):
    """Principal logarithms [k, n, n] (skew) of rotations [k, n, n] by a real Schur
    decomposition, and a mask [k] of those with one (an eigenvalue -1 means a rotation by
    pi: no unique logarithm, the entry is zero and False).

    One Schur decomposition a matrix replaces scipy's ``logm``, which geomstats' SO(n) log
    calls (timings: docs/benchmarks/sampling.md). Correctness is checked anyway:
    ``exp(log(w))`` must give back w (``REACH_RTOL``).
    """
    logs = np.zeros(rotations.shape)
    valid = np.ones(rotations.shape[0], dtype=bool)
    size = rotations.shape[-1]
    for index, rotation in enumerate(rotations):
        upper, vectors = linalg.schur(rotation, output="real")
        log_upper = np.zeros((size, size))
        row = 0
        while row < size:
            if row + 1 < size and upper[row + 1, row] != 0.0:  # a 2 x 2 block: a rotation
                angle = math.atan2((upper[row + 1, row] - upper[row, row + 1]) / 2,
                                   (upper[row, row] + upper[row + 1, row + 1]) / 2)
                log_upper[row + 1, row], log_upper[row, row + 1] = angle, -angle
                row += 2
            else:
                valid[index] &= upper[row, row] > 0
                row += 1
        log = vectors @ log_upper @ vectors.T
        logs[index] = (log - log.T) / 2 if valid[index] else 0.0
    return logs, valid


def _bi_invariant_log(metric, ends, starts):
    """log of the bi-invariant metric on SO(n): starts log(starts^T ends)."""
    logs, valid = _rotation_logs(np.swapaxes(starts, -1, -2) @ ends)
    return starts @ logs, valid


def _rigid_log(metric, ends, starts):
    """log of SE(n)'s canonical left metric, a product: rotations as above, translations
    as differences (geomstats' own ``log``, with the rotation part by ``_rotation_logs``)."""
    size = ends.shape[-1] - 1
    logs = np.zeros(ends.shape)
    logs[:, :size, :size], valid = _bi_invariant_log(
        metric, ends[:, :size, :size], starts[:, :size, :size]
    )
    logs[:, :size, size] = ends[:, :size, size] - starts[:, :size, size]
    return logs, valid


FAST_LOGS = {
    BiInvariantMetric: _bi_invariant_log,
    SpecialEuclideanMatricesCanonicalLeftMetric: _rigid_log,
}
"""Metric classes (exact types) whose ``log`` is computed here rather than by geomstats."""


def _fixed_point(space):
    """A data-independent point of ``space``: the identity of a group, else the projection
    of a fixed Gaussian ambient array (a generic point: no symmetry of the space fixes it)."""
    identity = getattr(space, "identity", None)
    if identity is not None:
        return to_numpy(identity)
    if not hasattr(space, "projection"):
        return None
    ambient = np.random.default_rng(REFERENCE_SEED).standard_normal(tuple(space.shape))
    point = to_numpy(space.projection(to_backend(ambient)))
    return point if bool(to_numpy(space.belongs(to_backend(point)))) else None


class _HorizontalSpace:
    """The Kendall shape space seen as a space of horizontal tangent vectors.

    geomstats' quotient is a copy of the pre-shape space with the quotient metric: its
    ``dim`` and ``to_tangent`` are the pre-shape ones. This view gives the shape space's
    dimension and projects on the horizontal space, for ``orthonormal_basis``.
    """

    def __init__(self, space, metric):
        self.space, self.bundle = space, metric._fiber_bundle
        self.shape = tuple(space.shape)
        ambient_dim = self.shape[-1]
        self.dim = int(space.dim) - ambient_dim * (ambient_dim - 1) // 2

    def to_tangent(self, vector, base_point):
        """Horizontal part of the pre-shape projection."""
        return self.bundle.horizontal_projection(self.space.to_tangent(vector, base_point),
                                                 base_point)


def _basis_space(space, metric):
    """The space whose tangent spaces the draws live in (horizontal ones for Kendall)."""
    return _HorizontalSpace(space, metric) if isinstance(metric, KendallShapeMetric) else space


def _rotation_onto(source, target):
    """Rotation R in SO(m) minimising |source R - target| (Procrustes), per batch entry.

    source, target : numpy [k, n, m] -> R : [k, m, m].
    """
    u_mat, _, vt_mat = np.linalg.svd(np.swapaxes(source, -1, -2) @ target)
    signs = np.ones(u_mat.shape[:-1])
    signs[..., -1] = np.sign(np.linalg.det(u_mat @ vt_mat))
    return (u_mat * signs[..., None, :]) @ vt_mat


class ParallelTransportSampler(IsometricTransport):
    """Standard tangent Gaussians at a reference point, moved by geomstats' parallel
    transport: exact for the metrics of ``has_exact_parallel_transport``.

    The orthonormal basis of T_ref is computed once (Gram-Schmidt in the metric). Draws
    at k base points take one batched ``log``, ``exp`` and ``parallel_transport`` call:
    of the d basis vectors when n_samples >= d (then combined with the coefficients),
    else of the draws themselves.

    Parameters
    ----------
    space : Manifold
    metric : RiemannianMetric
        ``ScalarProductMetric`` already unwrapped.

    Attributes
    ----------
    reference : numpy.ndarray, shape=[*space.shape]
        The reference point (the identity of a group, else a fixed generic point).
    second_reference : numpy.ndarray, shape=[*space.shape]
        The detour for base points at the cut locus of ``reference``.
    """

    def __init__(self, space, metric):
        super().__init__(space, metric)
        self.quotient = isinstance(metric, KendallShapeMetric)
        self._basis_space = _basis_space(space, metric)
        self.reference = _fixed_point(space)
        self._basis = orthonormal_basis(self._basis_space, metric, self.reference)
        unit = np.random.default_rng(REFERENCE_SEED).standard_normal(self.dim)
        unit *= SECOND_REFERENCE_DISTANCE / np.linalg.norm(unit)
        self.second_reference = to_numpy(
            metric.exp(to_backend(self.from_coordinates(unit)), to_backend(self.reference))
        )

    @classmethod
    def supports(cls, space, metric=None):
        """Whether ``space`` (with ``metric``, default its own) gets this sampler: an exact
        parallel transport, a data-independent reference point and an orthonormal basis
        there (geomstats' correlation-matrix spaces, whose ``to_tangent`` spans too little,
        are left to the Gram-Schmidt fallback and its error)."""
        metric = space.metric if metric is None else metric
        if not has_exact_parallel_transport(metric):
            return False
        if isinstance(metric, CLOSED_FORM_METRICS[2:]) and not isinstance(
            metric, PullbackDiffeoMetric
        ):
            return False  # families with registered transports; their other spaces (e.g.
            # symmetric matrices in the Frobenius metric) stay on Gram-Schmidt
        if isinstance(metric, KendallShapeMetric) and not isinstance(space, PreShapeSpace):
            return False
        if isinstance(metric, BiInvariantMetric) and len(space.shape) != 2:
            return False  # SO(3) as rotation vectors: geomstats' transport is for matrices
        reference = _fixed_point(space)
        if reference is None:
            return False
        try:
            orthonormal_basis(_basis_space(space, metric), metric, reference)
        except ValueError:
            return False
        return True

    @property
    def dim(self):
        """Intrinsic dimension (for Kendall's shape space, the pre-shape one less rotations)."""
        return int(self._basis_space.dim)

    def from_coordinates(self, coefficients):
        """Coordinates [..., d] in the reference basis -> tangent vectors at ref."""
        coefficients = np.asarray(coefficients, dtype=np.float64)
        flat = coefficients.reshape(-1, self.dim)
        return combine(flat, self._basis).reshape(coefficients.shape[:-1] + self._basis.shape[1:])

    def to_coordinates(self, tangent_vecs):
        """Tangent vectors [..., *shape] at ref -> coordinates [..., d] (metric products)."""
        vecs = np.asarray(tangent_vecs, dtype=np.float64)
        batch = vecs.shape[: vecs.ndim - len(self._basis.shape[1:])]
        flat = vecs.reshape((-1,) + self._basis.shape[1:])
        coords = np.stack(
            [
                np.atleast_1d(to_numpy(self.metric.inner_product(
                    to_backend(flat), to_backend(vec), to_backend(self.reference))))
                for vec in self._basis
            ],
            axis=-1,
        )
        return coords.reshape(batch + (self.dim,))

    def reference_basis(self):
        """Orthonormal basis of T_ref, shape=[d, *space.shape] (computed once)."""
        return self._basis.copy()

    def _log(self, ends, starts):
        """``metric.log(ends, starts)`` [k] as numpy, and a mask [k] of the points where
        geomstats gave one (its SO(n) log refuses a whole batch holding a rotation by pi
        from the start: such points are retried alone and get a zero direction)."""
        fast_log = FAST_LOGS.get(type(self.metric))
        if fast_log is not None:
            return fast_log(self.metric, ends, starts)
        with warnings.catch_warnings():  # torch's logm near pi: caught by the reach test
            warnings.filterwarnings("ignore", "Casting complex values to real")
            try:
                logs = self.metric.log(to_backend(ends), to_backend(starts))
                return _real(logs), np.ones(ends.shape[0], dtype=bool)
            except ValueError:
                pass
            direction = np.zeros(ends.shape)
            logged = np.zeros(ends.shape[0], dtype=bool)
            for index, (end, start) in enumerate(zip(ends, starts)):
                try:
                    direction[index] = _real(self.metric.log(to_backend(end), to_backend(start)))
                    logged[index] = True
                except ValueError:
                    continue
        return direction, logged

    def _move(self, vecs, starts, ends):
        """Parallel-transport vecs [m, k, *shape] at starts [k] to ends [k].

        Returns the moved vectors and a mask [k] of the ends reached by the geodesic
        (False at the cut locus of the start: those entries are not valid).
        """
        n_vecs, n_points = vecs.shape[:2]
        shape = vecs.shape[2:]
        starts, ends = np.array(starts), np.array(ends)  # writable, for torch
        direction, logged = self._log(ends, starts)
        reached = _real(self.metric.exp(to_backend(direction), to_backend(starts)))
        tiled = np.broadcast_to(direction, (n_vecs, n_points) + shape)
        tiled_starts = np.broadcast_to(starts, (n_vecs, n_points) + shape)
        steps = {"n_steps": KENDALL_N_STEPS} if self.quotient else {}
        moved = _real(self.metric.parallel_transport(
            to_backend(vecs.reshape((-1,) + shape)),
            to_backend(tiled_starts.reshape((-1,) + shape)),
            direction=to_backend(tiled.reshape((-1,) + shape)),
            **steps,
        )).reshape(vecs.shape)
        if self.quotient:  # the geodesic ends at the representative of w aligned with start
            rotation = _rotation_onto(ends, reached)
            ends_rotated = ends @ rotation
            moved = moved @ np.swapaxes(rotation, -1, -2)
        else:
            ends_rotated = ends
        gap = np.abs(reached - ends_rotated).reshape(n_points, -1).max(axis=1)
        scale = np.maximum(1.0, np.abs(ends).reshape(n_points, -1).max(axis=1))
        reach = logged & np.isfinite(gap) & (gap <= REACH_RTOL * scale)
        return moved, reach & np.isfinite(moved).reshape(n_vecs, n_points, -1).all(axis=(0, 2))

    def _route(self, vecs, points, backward):
        """Move vecs [m, k] between the reference and points [k], through the second
        reference where the direct geodesic does not reach."""
        ref = np.broadcast_to(self.reference, points.shape)
        starts, ends = (points, ref) if backward else (ref, points)
        moved, reach = self._move(vecs, starts, ends)
        if reach.all():
            return moved
        far = np.flatnonzero(~reach)
        detour = np.broadcast_to(self.second_reference, points[far].shape)
        hops = [(points[far], detour), (detour, ref[far])] if backward else [
            (ref[far], detour), (detour, points[far])]
        rerouted = vecs[:, far]
        for start, end in hops:
            rerouted, reach_far = self._move(rerouted, start, end)
            if not reach_far.all():
                stuck = far[~reach_far].tolist()
                raise ValueError(
                    f"base_points at batch indices {stuck} are at the cut locus of both "
                    f"reference points of {type(self.metric).__name__}: no geodesic to "
                    "parallel-transport along"
                )
        moved[:, far] = rerouted
        return moved

    def transport(self, base_points, tangent_vecs):
        """Parallel-transport tangent vectors [n, k] at ref to base_points [k]."""
        return self._route(np.asarray(tangent_vecs, dtype=np.float64),
                           np.asarray(base_points, dtype=np.float64), backward=False)

    def transport_back(self, base_points, tangent_vecs):
        """Parallel-transport tangent vectors [n, k] at base_points [k] to ref."""
        return self._route(np.asarray(tangent_vecs, dtype=np.float64),
                           np.asarray(base_points, dtype=np.float64), backward=True)

    def sample(self, base_points, n_samples, rng):
        """Draw at ref, move to each base point: the d basis vectors when n_samples >= d
        (then combined with the coefficients), else the draws."""
        n_points = base_points.shape[0]
        coefficients = rng.standard_normal((n_samples, n_points, self.dim))
        if n_samples < self.dim:
            return self.transport(base_points, self.from_coordinates(coefficients))
        basis = np.broadcast_to(self._basis[:, None], (self.dim, n_points) + self._basis.shape[1:])
        moved = self.transport(base_points, np.array(basis))
        flat = np.einsum("nkd,dkp->nkp", coefficients, moved.reshape(self.dim, n_points, -1))
        return flat.reshape((n_samples,) + base_points.shape)


def find_parallel_transport(metric, space):
    """``ParallelTransportSampler`` if it serves ``space`` with ``metric``, else None."""
    return ParallelTransportSampler if ParallelTransportSampler.supports(space, metric) else None
