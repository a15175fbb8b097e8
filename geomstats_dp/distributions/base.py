"""Interfaces of the standard tangent samplers behind ``TangentGaussian``.

A sampler draws N_w(0, I) (identity covariance in the *unscaled* metric at w) at a batch
of base points. Arrays are float64 numpy: ``base_points`` has shape ``[k, *space.shape]``
and a draw has shape ``[n_samples, k, *space.shape]``.
"""

from abc import ABC, abstractmethod

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_finite_array


def row_dots(first, second):
    """Dot products of matching rows, shape=[k], for first, second of shape [k, n].

    One base point (k = 1, the common case of one draw per call) takes a plain BLAS dot,
    several times cheaper than ``einsum`` at that size.
    """
    if first.shape[0] == 1:
        return np.array([first[0] @ second[0]])
    return np.einsum("ki,ki->k", first, second)


class TangentSampler(ABC):
    """Draws standard tangent Gaussians N_w(0, I) at base points.

    Parameters
    ----------
    space : Manifold
        The geomstats space.
    metric : RiemannianMetric
        The metric the noise is standard in (``ScalarProductMetric`` already unwrapped).
    """

    belongs_implies_finite = False
    """Whether ``belongs`` is False at any point holding NaN or inf (so that a passing
    membership test also proves the point finite, and the separate finiteness pass can be
    skipped). Families whose closed-form test guarantees it set this to True."""

    def __init__(self, space, metric):
        self.space = space
        self.metric = metric

    def belongs(self, points, atol):
        """Which points lie on the space: geomstats' ``belongs`` (families override it).

        Parameters
        ----------
        points : array-like, shape=[k, *space.shape]
            float64 numpy.
        atol : float

        Returns
        -------
        belongs : array-like, shape=[k], bool
        """
        found = self.space.belongs(to_backend(points), atol=atol)
        return np.atleast_1d(to_numpy(found)).astype(bool)

    def is_tangent(self, vectors, points, atol):
        """Which vectors are tangent at their points: geomstats' ``is_tangent``.

        Parameters
        ----------
        vectors, points : array-like, shape=[k, *space.shape]
            float64 numpy.
        atol : float

        Returns
        -------
        is_tangent : array-like, shape=[k], bool
        """
        found = self.space.is_tangent(to_backend(vectors), to_backend(points), atol=atol)
        return np.atleast_1d(to_numpy(found)).astype(bool)

    def check_points(self, points, atol):
        """``(belongs(points, atol), prepared)``: the membership test [k], and what of its
        work ``sample_prepared`` can reuse at these points only (None here; SPD affine:
        the Cholesky factors [k, m, m])."""
        return self.belongs(points, atol), None

    def sample_prepared(self, base_points, n_samples, rng, prepared):
        """``sample`` reusing ``prepared`` from ``check_points(base_points, ...)``.

        The draws are those of ``sample(base_points, n_samples, rng)`` exactly.
        """
        return self.sample(base_points, n_samples, rng)

    def sample_one(self, point, rng):
        """One standard draw at one base point: ``sample(point[None], 1, rng)[0, 0]``.

        Raises ``check_finite_array``'s ValueError (named ``base_point``, index [0, ...])
        if ``point`` holds NaN or inf: here before any draw; families that can tell from
        the draw's own arithmetic test it after (the normals are then consumed).

        Parameters
        ----------
        point : array-like, shape=[*space.shape]
            float64 numpy.
        rng : numpy.random.Generator

        Returns
        -------
        tangent_vec : array-like, shape=[*space.shape]
            A new array (the caller may scale it in place).
        """
        points = point[None]
        check_finite_array(points, "base_point")
        return self.sample(points, 1, rng)[0, 0]

    draw_one = None
    """Families whose one-point draw is written in array operators (numpy or the active
    backend) define ``draw_one(point, normals, scale=1.0)``: ``scale`` times the standard
    draw at ``point`` [*space.shape] from the normals [dim] it reads from the generator
    (those of ``sample_one``, in order), a new array of the point's type, checked for
    finiteness as ``sample_one`` checks it. ``TangentGaussian.prepare`` uses it, so that a
    pytorch run's noise is formed in torch."""

    @abstractmethod
    def sample(self, base_points, n_samples, rng):
        """Draw ``n_samples`` standard tangent Gaussians at each base point.

        Parameters
        ----------
        base_points : array-like, shape=[k, *space.shape]
        n_samples : int
        rng : numpy.random.Generator

        Returns
        -------
        tangent_vecs : array-like, shape=[n_samples, k, *space.shape]
            A new array (the caller may scale it in place).
        """


class IsometricTransport(TangentSampler):
    """A closed-form linear isometry from T_ref to T_w, and its inverse.

    Subclasses give the reference point's orthonormal coordinates (``from_coordinates``)
    and the transport; sampling, the explicit basis and the inverse follow from them.
    """

    @classmethod
    def supports(cls, space):
        """Whether the transport applies to ``space`` (all spaces of its metric class)."""
        return True

    @property
    def dim(self):
        """Intrinsic dimension d of the space."""
        return int(self.space.dim)

    @abstractmethod
    def from_coordinates(self, coefficients):
        """Map coordinates in an orthonormal basis of T_ref to tangent vectors at ref.

        Parameters
        ----------
        coefficients : array-like, shape=[..., d]

        Returns
        -------
        tangent_vecs : array-like, shape=[..., *space.shape]
        """

    @abstractmethod
    def transport(self, base_points, tangent_vecs):
        """Move tangent vectors at the reference point to the base points, isometrically.

        Parameters
        ----------
        base_points : array-like, shape=[k, *space.shape]
        tangent_vecs : array-like, shape=[n, k, *space.shape]
            Tangent at the reference point; ``tangent_vecs[:, j]`` goes to ``base_points[j]``.

        Returns
        -------
        tangent_vecs : array-like, shape=[n, k, *space.shape]
        """

    @abstractmethod
    def transport_back(self, base_points, tangent_vecs):
        """Inverse of ``transport``: tangent vectors at the base points back to ref."""

    @abstractmethod
    def to_coordinates(self, tangent_vecs):
        """Inverse of ``from_coordinates``: tangent vectors at ref to coordinates [..., d]."""

    def reference_basis(self):
        """Orthonormal basis of T_ref, shape=[d, *space.shape]."""
        return self.from_coordinates(np.eye(self.dim))

    def sample(self, base_points, n_samples, rng):
        """Draw at the reference point, then transport (exact: the map is an isometry)."""
        n_points = base_points.shape[0]
        coefficients = rng.standard_normal((n_samples, n_points, self.dim))
        return self.transport(base_points, self.from_coordinates(coefficients))

    def vector_transport(self, tangent_vecs, base_points, end_points):
        """Isometric vector transport T_x -> T_y through the reference point.

        Parameters
        ----------
        tangent_vecs, base_points, end_points : array-like, shape=[k, *space.shape]

        Returns
        -------
        tangent_vecs : array-like, shape=[k, *space.shape]
            Tangent at ``end_points``, with the same metric norms and inner products.
        """
        at_reference = self.transport_back(base_points, tangent_vecs[None])
        return self.transport(end_points, at_reference)[0]
