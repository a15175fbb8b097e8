"""The tangent-space Gaussian N_w(mu, sigma^2) on a geomstats manifold."""

import functools
import math

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import (
    TORCH,
    BufferedNormals,
    as_numpy,
    get_rng,
    to_backend,
    to_numpy,
)
from geomstats_dp._validation import (
    check_finite_array,
    check_positive_finite,
    check_positive_int,
)
from geomstats_dp.distributions.baselines import (
    ExplicitBasis,
    GramSchmidt,
    MetropolisHastings,
)
from geomstats_dp.distributions.parallel_transport import find_parallel_transport
from geomstats_dp.distributions.registry import find_transport, unwrap_metric

METHODS = ("transport", "explicit_basis", "gram_schmidt", "mcmc")


class TangentGaussian:
    """Gaussian on the tangent space T_w M: density ~ exp(-||xi - mu||_w^2 / (2 sigma^2)).

    Coordinates of a draw in any metric-orthonormal basis of T_w are iid N(mu_i, sigma^2),
    so E||xi - mu||_w^2 = d sigma^2 with d the intrinsic dimension.

    Parameters
    ----------
    space : Manifold
        A geomstats space equipped with a metric (``ScalarProductMetric`` is unwrapped and
        the noise rescaled).
    method : {"transport", "explicit_basis", "gram_schmidt", "mcmc"}
        "transport" (default): draw at a reference point and move the draw by a
        closed-form linear isometry (fast, exact); metrics without a registered transport
        use geomstats' exact ``parallel_transport`` where it has one (SO(n), SE(n),
        pre-shape and Kendall shape spaces, see ``parallel_transport.py``), else fall
        back to "gram_schmidt". The others are the baselines of Utpala et al. (2023):
        an explicit orthonormal basis built from the transport, Gram-Schmidt in
        ``metric.inner_product``, and random-walk Metropolis-Hastings.
    atol : float
        Tolerance of the checks that base points lie on the space and means are tangent.
    validate : bool
        Check that base points lie on the space and means are tangent (shapes and
        finiteness are always checked). Each family with a closed-form transport tests
        membership and tangency in closed form, reading the point once (a randomised probe
        on the Grassmannian, where the exact test is cubic; SPD needs a Cholesky
        factorisation); other spaces use geomstats' ``belongs`` and ``is_tangent``.
    mcmc_options : dict, optional
        Keyword arguments of the Metropolis-Hastings sampler (``burn_in``, ``thinning``,
        ``step_size``); only with method="mcmc".

    Attributes
    ----------
    sampler : TangentSampler
        The standard sampler in use (after any fallback).
    scale : float
        Factor of geomstats' ``ScalarProductMetric`` (1.0 for a plain metric).
    """

    def __init__(self, space, method="transport", atol=1e-6, validate=True,
                 mcmc_options=None):
        if not hasattr(space, "metric"):
            raise TypeError(
                f"space {type(space).__name__} has no metric; equip it with one first"
            )
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if mcmc_options and method != "mcmc":
            raise ValueError("mcmc_options is only used with method='mcmc'")
        self.space = space
        self.method = method
        self.atol = check_positive_finite(atol, "atol")
        self.validate = bool(validate)
        metric, self.scale = unwrap_metric(space.metric)
        self.sampler = self._make_sampler(metric, mcmc_options or {})
        if self._checker is None:
            self._checker = self.sampler

    def _make_sampler(self, metric, mcmc_options):
        transport = find_transport(metric, self.space) or find_parallel_transport(
            metric, self.space
        )
        if self.method == "transport":
            sampler_class = transport or GramSchmidt
            self._checker = sampler_class(self.space, metric)
            return self._checker
        # the family's closed-form membership tests, whatever the method
        self._checker = transport(self.space, metric) if transport else None
        if self.method == "explicit_basis":
            if transport is None:
                raise ValueError(
                    f"method='explicit_basis' needs a registered transport for "
                    f"{type(metric).__name__}; use 'gram_schmidt'"
                )
            return ExplicitBasis(transport(self.space, metric))
        if self.method == "gram_schmidt":
            return GramSchmidt(self.space, metric)
        return MetropolisHastings(self.space, metric, **mcmc_options)

    @property
    def dim(self):
        """Intrinsic dimension of the space."""
        return int(self.space.dim)

    @property
    def normals_per_draw(self):
        """The standard normals each call of ``prepare``'s draw reads from its generator,
        and nothing else: the dimension where the draw is the family's one-point draw
        (unvalidated, ``draw_one``); None where it is not known (``sample_one``, a
        validated or overridden ``sample``)."""
        if (type(self).sample is _OWN_SAMPLE and not self.validate
                and self.sampler.draw_one is not None):
            return self.dim
        return None

    def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None, mean=None):
        """Draw tangent vectors from N_w(mean, sigma^2).

        Parameters
        ----------
        base_point : array-like, shape=[*space.shape] or [k, *space.shape]
            One base point, or a batch of k base points.
        n_samples : int
            Number of draws at each base point.
        sigma : float
            Standard deviation of each coordinate in a metric-orthonormal basis.
        random_state : None, int or numpy.random.Generator
        mean : array-like, shape=[*space.shape] or [k, *space.shape], optional
            Tangent vector(s) at the base point(s); zero by default.

        Returns
        -------
        tangent_vec : array-like
            One base point: shape [n_samples, *space.shape], or [*space.shape] when
            n_samples == 1. A batch: [n_samples, k, *space.shape], or
            [k, *space.shape] when n_samples == 1.
        """
        sigma = check_positive_finite(sigma, "sigma")
        n_samples = check_positive_int(n_samples, "n_samples")
        return self._sample_checked(base_point, n_samples, sigma, random_state, mean)

    def _sample_checked(self, base_point, n_samples, sigma, random_state, mean=None):
        """``sample`` after its checks of ``sigma`` and ``n_samples``."""
        base_points, batched, prepared = self._check_base_point(base_point)
        means = self._check_mean(mean, base_points)
        rng = get_rng(random_state)
        if prepared is None:
            draws = self.sampler.sample(base_points, n_samples, rng)
        else:
            draws = self.sampler.sample_prepared(base_points, n_samples, rng, prepared)
        factor = sigma / math.sqrt(self.scale)
        if factor != 1.0:
            draws *= factor  # samplers return a fresh array
        if means is not None:
            draws = draws + means
        if not batched:
            draws = draws[:, 0]
        if n_samples == 1:
            draws = draws[0]
        return to_backend(draws)

    def prepare(self, sigma=1.0, random_state=None):
        """Return ``draw(base_point)``: one draw of N_w(0, sigma^2) per call, for a run.

        Successive calls give, bit for bit, the draws of successive
        ``sample(base_point, sigma=sigma, random_state=rng)`` calls with the generator
        ``rng`` of ``random_state``; ``sigma`` and ``random_state`` are checked once,
        here. Unvalidated (``validate=False``), a call checks the shape of one base point
        and reads it once more in the family's one-point draw (``draw_one`` where the
        family has it, else ``sample_one``), which raises ``sample``'s ValueError at a
        point holding NaN or inf (on the sphere and the hyperboloid after drawing its
        normals, ``sample`` before); validated, a call is ``sample``. Through
        ``draw_one`` the point and the draw stay arrays of the active backend, the same
        normals drawn by ``rng`` (taken from a ``BufferedNormals`` stream one conversion
        per refill): on pytorch the draws equal ``sample``'s to rounding. Where ``sample`` is overridden by a subclass or replaced on the
        class, ``draw`` calls it (with ``n_samples=1``): the optimisers then draw what it
        draws.

        Parameters
        ----------
        sigma : float
        random_state : None, int or numpy.random.Generator

        Returns
        -------
        draw : callable
            ``draw(base_point)``, base_point of shape [*space.shape], returns a tangent
            vector of shape [*space.shape] (active backend).
        """
        sigma = check_positive_finite(sigma, "sigma")
        rng = get_rng(random_state)
        if type(self).sample is not _OWN_SAMPLE:
            return functools.partial(self.sample, n_samples=1, sigma=sigma, random_state=rng)
        if self.validate:
            return functools.partial(
                self._sample_checked, n_samples=1, sigma=sigma, random_state=rng)
        factor = sigma / math.sqrt(self.scale)
        shape = tuple(self.space.shape)
        if self.sampler.draw_one is not None:
            return self._backend_draw(shape, factor, rng)
        sample_one = self.sampler.sample_one

        def draw(base_point):
            point = as_numpy(base_point)
            if point.shape != shape:
                raise ValueError(f"base_point must have shape {shape}, got {point.shape}")
            noise = sample_one(point, rng)
            if factor != 1.0:
                noise *= factor  # a fresh array
            return to_backend(noise)

        return draw

    def _backend_draw(self, shape, factor, rng):
        """``prepare``'s draw through the family's ``draw_one``: the base point and the
        draw stay arrays of the active backend; the normals come from a
        ``BufferedNormals`` stream as backend views (one conversion per refill; on
        pytorch, the sphere's and the hyperboloid's as rows behind a zero,
        ``draw_padded``), else are converted one draw at a time."""
        draw_one, dim = self.sampler.draw_one, self.dim
        padded = getattr(self.sampler, "draw_padded", None)
        if TORCH and padded is not None and isinstance(rng, BufferedNormals):
            draw_one, normals = padded, rng.backend_padded_normal  # (0, normals)
        elif isinstance(rng, BufferedNormals):
            normals = rng.backend_normal
        else:
            def normals(count):
                return to_backend(rng.standard_normal(count))

        def draw(base_point):
            if not gs.is_array(base_point):
                base_point = to_backend(as_numpy(base_point))
            if tuple(base_point.shape) != shape:
                raise ValueError(
                    f"base_point must have shape {shape}, got {tuple(base_point.shape)}")
            return draw_one(base_point, normals(dim), factor)

        return draw

    def log_prob(self, tangent_vec, base_point, sigma=1.0, mean=None):
        """Log-density w.r.t. the Lebesgue measure of a metric-orthonormal basis of T_w.

        Parameters
        ----------
        tangent_vec : array-like, shape=[..., *space.shape]
        base_point : array-like, shape=[..., *space.shape]
        sigma : float
        mean : array-like, shape=[..., *space.shape], optional

        Returns
        -------
        log_prob : array-like, shape=[...]
        """
        sigma = check_positive_finite(sigma, "sigma")
        centred = tangent_vec if mean is None else tangent_vec - mean
        squared_norm = self.space.metric.squared_norm(centred, base_point)
        return -squared_norm / (2 * sigma**2) - 0.5 * self.dim * math.log(
            2 * math.pi * sigma**2
        )

    def _check_base_point(self, base_point):
        """Return base points as numpy [k, *shape], whether a batch was given, and what
        the sampler can reuse of the membership test (``TangentSampler.check_points``).

        Where the family's membership test fails on any NaN or inf, a passing test proves
        the points finite and the separate finiteness pass is skipped; a failing one is
        followed by it, so that non-finite points are reported as such.
        """
        points = as_numpy(base_point)
        shape = tuple(self.space.shape)
        if points.shape == shape:
            points, batched = points[None], False
        elif points.ndim == len(shape) + 1 and points.shape[1:] == shape:
            batched = True
        else:
            raise ValueError(
                f"base_point must have shape {shape} or [k, *{shape}], got {points.shape}"
            )
        checker = self._checker
        finite_proved = self.validate and checker.belongs_implies_finite
        if not finite_proved and not math.isfinite(points.sum()):  # one pass; then locate
            check_finite_array(points, "base_point")
        if not self.validate:
            return points, batched, None
        on_space, prepared = checker.check_points(points, self.atol)
        if np.count_nonzero(on_space) < on_space.size:  # ndarray.all() costs 2 us
            check_finite_array(points, "base_point")
            index = np.flatnonzero(~on_space).tolist()
            where = f"at batch indices {index}" if batched else ""
            raise ValueError(
                f"base_point is not on {type(self.space).__name__} (atol={self.atol}) "
                f"{where}".rstrip()
            )
        return points, batched, prepared if checker is self.sampler else None

    def _check_mean(self, mean, base_points):
        """Return the mean as numpy [k, *shape] (or None) after checking it is tangent."""
        if mean is None:
            return None
        means = to_numpy(mean)
        shape = tuple(self.space.shape)
        if means.shape == shape:
            means = np.broadcast_to(means, base_points.shape).copy()
        if means.shape != base_points.shape:
            raise ValueError(
                f"mean must have shape {shape} or {base_points.shape}, got {means.shape}"
            )
        check_finite_array(means, "mean")
        if not self.validate:
            return means
        tangent = self._checker.is_tangent(means, base_points, self.atol)
        if np.count_nonzero(tangent) < tangent.size:
            index = np.flatnonzero(~tangent).tolist()
            raise ValueError(f"mean is not tangent at base_point (indices {index})")
        return means


_OWN_SAMPLE = TangentGaussian.sample  # ``prepare`` defers to any other ``sample``
