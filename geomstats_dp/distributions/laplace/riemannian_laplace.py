"""The Riemannian Laplace distribution: density ~ exp(-rho(eta, x) / sigma) w.r.t. volume."""

import math

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import get_rng, to_backend, to_numpy
from geomstats_dp._validation import (
    check_finite_array,
    check_positive_finite,
    check_positive_int,
)
from geomstats_dp.distributions.laplace.bures_wasserstein import BuresWassersteinEnvelope
from geomstats_dp.distributions.laplace.geometry import describe
from geomstats_dp.distributions.laplace.mcmc import ManifoldMetropolis, default_step_size
from geomstats_dp.distributions.laplace.radial import RadialLaw, log_sphere_area
from geomstats_dp.distributions.laplace.rejection import (
    MIN_ACCEPTANCE,
    LowAcceptanceError,
    rejection_sample,
)
from geomstats_dp.distributions.laplace.spd_polar import (
    SPDSpectrumLaw,
    haar_orthogonal,
    polar_points,
    symmetric_sqrt,
)
from geomstats_dp.distributions.laplace.spd_polar import scale_limit as spd_scale_limit
from geomstats_dp.distributions.tangent_gaussian import TangentGaussian

METHODS = ("auto", "exact", "mcmc")
RADIAL_CURVATURE = {"flat": 0, "sphere": 1, "hyperbolic": -1}
MAX_EXACT_SPD_SIZE = 3
# Beyond this distance from eta, geomstats' hyperboloid (cosh r ~ 1/sqrt(eps)) and Poincare
# ball (1 - |x| ~ eps) coordinates no longer represent the point in float64.
MAX_HYPERBOLIC_RADIUS = 17.0
MCMC_OPTIONS = {
    "manifold": ("burn_in", "thinning", "n_chains", "step_size", "max_step"),
    "spectrum": ("burn_in", "step_size"),
}


class RiemannianLaplace:
    """Laplace law on a Riemannian manifold (Reimherr et al., 2021, Definition 3).

    Density C^-1 exp(-rho(eta, x) / sigma) w.r.t. the Riemannian volume, optionally
    restricted to the open geodesic ball B_radius(center).

    Samplers (``method="auto"`` picks the first that applies):

    - Euclidean spaces, matrix spaces with the Frobenius metric, SPD log-Euclidean:
      x = Exp_eta(r u), r ~ Gamma(d, sigma), u uniform on the unit sphere of T_eta (the
      l2 K-norm mechanism, in log coordinates for log-Euclidean);
    - Hypersphere: same with r ~ e^(-r/sigma) sin^(d-1)(r) on [0, pi];
    - Hyperboloid, PoincareBall: r ~ e^(-r/sigma) sinh^(d-1)(r), which needs
      sigma < 1/(d-1) (else ValueError) unless truncated;
    - SPD affine-invariant: polar form eta^1/2 U diag(e^r) U^T eta^1/2, U Haar, r with
      density ~ e^(-|r|/sigma) prod_{i<j} sinh(|r_i - r_j|/2), which needs
      sigma < 2 sqrt(3/(n(n^2-1))) unless truncated; exact rejection for n <= 3,
      Metropolis chains on r beyond (on the manifold when truncated);
    - SPD Bures-Wasserstein: exact rejection in the square-root chart X = S^2 from an
      l2 Laplace law on S of scale sqrt2 sigma (``bures_wasserstein``), the ball included;
    - any other metric: Metropolis-Hastings on the manifold (``mcmc.ManifoldMetropolis``).

    Unit directions come from ``TangentGaussian(space)`` draws divided by their norm. A
    truncated law is sampled exactly by rejection (the radial law cut at
    radius + rho(center, eta) first); when fewer than 1 in 1,000 proposals land in the
    ball, "auto" switches to Metropolis-Hastings restricted to the ball.

    Parameters
    ----------
    space : Manifold
        A geomstats space equipped with a metric (``c * metric`` is supported).
    footpoint : array-like, shape=[*space.shape]
        eta, the centre of the law.
    scale : float
        sigma > 0, in the units of ``space.metric.dist``.
    radius : float, optional
        Restrict the law to the open geodesic ball of this radius about ``center``.
    center : array-like, shape=[*space.shape], optional
        Centre of the ball; default: ``footpoint``. Only with ``radius``.
    method : {"auto", "exact", "mcmc"}
    atol : float
        Tolerance of the checks that footpoint and center lie on the space.
    mcmc_options : dict, optional
        Metropolis-Hastings settings: ``burn_in``, ``thinning``, ``n_chains``,
        ``step_size``, ``max_step`` on the manifold (see ``ManifoldMetropolis``);
        ``burn_in`` and ``step_size`` for the chains on the SPD spectrum.

    Attributes
    ----------
    geometry : Geometry
        Family, curvature and injectivity facts about the metric.
    is_normalised : bool
        Whether ``log_prob`` includes the normalising constant (untruncated Euclidean,
        log-Euclidean, sphere and hyperbolic laws) or is only defined up to a constant.
    method_ : str or None
        Sampler used by the last ``sample`` call ("exact" or "mcmc").
    """

    def __init__(
        self, space, footpoint, scale, radius=None, center=None, method="auto", atol=1e-6,
        mcmc_options=None,
    ):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.space = space
        self.geometry = describe(space)
        self.scale = check_positive_finite(scale, "scale")
        self.atol = check_positive_finite(atol, "atol")
        self.footpoint = self._check_point(footpoint, "footpoint")
        if radius is None and center is not None:
            raise ValueError("center is only used together with radius")
        self.radius = None if radius is None else check_positive_finite(radius, "radius")
        self.center = self.footpoint if center is None else self._check_point(center, "center")
        self.method = method
        self.mcmc_options = dict(mcmc_options or {})
        self._check_method()
        self._unit = math.sqrt(self.geometry.metric_scale)  # scaled distance per unscaled
        self._check_existence()
        self.method_ = None

    @property
    def truncated(self):
        """Whether the law is restricted to a ball."""
        return self.radius is not None

    @property
    def is_normalised(self):
        """Whether ``log_prob`` is the normalised log-density."""
        return self.geometry.family in RADIAL_CURVATURE and not self.truncated

    def _check_point(self, point, name):
        """Return ``point`` as numpy after checking its shape and that it is on the space."""
        array = to_numpy(point)
        shape = tuple(self.space.shape)
        if array.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
        check_finite_array(array, name)
        if not bool(np.all(to_numpy(self.space.belongs(to_backend(array), atol=self.atol)))):
            raise ValueError(f"{name} is not on {type(self.space).__name__} (atol={self.atol})")
        return array

    @property
    def has_exact_sampler(self):
        """Whether an exact sampler exists for this metric (else Metropolis-Hastings only)."""
        return self.geometry.family != "generic"

    def _check_method(self):
        if self.method == "exact" and not self.has_exact_sampler:
            raise ValueError(
                f"method='exact' has no sampler for {type(self.space).__name__}; "
                "use 'auto' or 'mcmc'"
            )
        allowed = MCMC_OPTIONS[self._mcmc_kind()]
        unknown = sorted(set(self.mcmc_options) - set(allowed))
        if unknown:
            raise ValueError(f"mcmc_options {unknown} not understood; expected some of {allowed}")

    def _mcmc_kind(self):
        spectrum = self.geometry.family == "spd_affine" and not self.truncated
        return "spectrum" if spectrum else "manifold"

    def scale_limit(self):
        """Supremum of the scales for which the untruncated law exists (inf if none)."""
        family, unit = self.geometry.family, self._unit
        if family == "hyperbolic" and self.geometry.dim > 1:
            return unit / (self.geometry.dim - 1)
        if family == "spd_affine":
            return unit * spd_scale_limit(self.space.n)
        return math.inf

    def _check_existence(self):
        limit = self.scale_limit()
        if self.truncated or self.scale < limit:
            return
        if self.geometry.family == "hyperbolic":
            law = f"exp(-r/scale) sinh^(d-1)(r) on H^{self.geometry.dim}"
        else:
            law = f"exp(-|r|/scale) prod sinh(|r_i - r_j|/2) on SPD({self.space.n})"
        raise ValueError(
            f"scale must be < {limit:.6g} for the Laplace law to be normalisable ({law}); "
            f"got scale={self.scale}. Pass radius= to restrict it to a ball"
        )

    # ------------------------------------------------------------------ exact samplers

    def _outer_radius(self):
        """Unscaled bound on rho(eta, x) for x in the ball (inf when untruncated)."""
        if not self.truncated:
            return math.inf
        offset = self._distances(self.center[None])[0]
        return (self.radius + offset) / self._unit

    def _distances(self, points, origin=None):
        """rho(origin, points) in the space's metric, numpy [k] for points [k, *shape]."""
        origin = self.footpoint if origin is None else origin
        values = self.space.metric.dist(to_backend(origin), to_backend(points))
        return np.atleast_1d(to_numpy(values))

    def _unit_directions(self, n_samples, rng):
        """Uniform unit tangent vectors at eta, numpy [n, *shape] (unit in space.metric)."""
        draws = TangentGaussian(self.space).sample(
            to_backend(self.footpoint), n_samples=n_samples, random_state=rng
        )
        draws = to_numpy(draws).reshape((n_samples,) + self.footpoint.shape)
        norms = np.atleast_1d(
            to_numpy(self.space.metric.norm(to_backend(draws), to_backend(self.footpoint)))
        )
        return draws / norms.reshape((-1,) + (1,) * self.footpoint.ndim)

    def _radial_points(self, n_samples, rng):
        law = RadialLaw(
            self.geometry.dim, self._unit / self.scale,
            RADIAL_CURVATURE[self.geometry.family], self._outer_radius(),
        )
        radii = law.sample(n_samples, rng)
        if self.geometry.family == "hyperbolic" and radii.max() > MAX_HYPERBOLIC_RADIUS:
            raise ValueError(
                f"a draw at distance {radii.max():.3g} from the footpoint exceeds what "
                f"geomstats' hyperbolic coordinates represent in float64 (about "
                f"{MAX_HYPERBOLIC_RADIUS:g}); use a smaller scale or radius="
            )
        radii = self._unit * radii
        tangent = radii.reshape((-1,) + (1,) * self.footpoint.ndim) * self._unit_directions(
            n_samples, rng
        )
        points = self.space.metric.exp(to_backend(tangent), to_backend(self.footpoint))
        return to_numpy(points).reshape(tangent.shape)

    def _spectrum_law(self):
        return SPDSpectrumLaw(self.space.n, self.scale / self._unit, self._outer_radius())

    def _polar_points(self, n_samples, rng, spectra=None):
        if spectra is None:
            spectra = self._spectrum_law().sample_exact(n_samples, rng)
        rotations = haar_orthogonal(n_samples, self.space.n, rng)
        return polar_points(symmetric_sqrt(self.footpoint), spectra, rotations)

    def _exact_points(self, n_samples, rng, min_acceptance):
        """Exact draws of the (possibly truncated) law, numpy [n, *shape]."""
        if self.geometry.family == "spd_bures_wasserstein":
            ball = {}
            if self.truncated:
                offset = self._distances(self.center[None])[0]
                ball = {"center": self.center, "radius": self.radius, "footpoint_offset": offset}
            envelope = BuresWassersteinEnvelope(
                self.footpoint, self.scale, self._unit, self._log_target, **ball
            )
            return rejection_sample(envelope.propose, n_samples, rng,
                                    what="square-root chart envelope",
                                    min_acceptance=min_acceptance)
        draw = self._polar_points if self.geometry.family == "spd_affine" else self._radial_points
        if not self.truncated:
            return draw(n_samples, rng)

        def propose(size, generator):
            points = draw(size, generator)
            return points, self._distances(points, self.center) < self.radius

        return rejection_sample(propose, n_samples, rng, what="ball truncation",
                                min_acceptance=min_acceptance)

    # ------------------------------------------------------------------ MCMC samplers

    def _log_target(self, points):
        """log exp(-rho(eta, x)/sigma) (ball indicator included), numpy [k]."""
        points = to_numpy(points)
        values = -self._distances(points) / self.scale
        if self.truncated:
            values = np.where(self._distances(points, self.center) < self.radius, values, -np.inf)
        return values

    def _manifold_chains(self):
        options = dict(self.mcmc_options)
        injectivity = self.geometry.scaled_injectivity_radius()
        if "max_step" not in options and injectivity is not None and math.isfinite(injectivity):
            options["max_step"] = injectivity
        if "step_size" not in options:
            options["step_size"] = default_step_size(
                self.scale, self.radius, options.get("max_step", math.inf)
            )
        return ManifoldMetropolis(self.space, self._log_target, **options)

    def _mcmc_points(self, n_samples, rng):
        if self._mcmc_kind() == "spectrum":
            spectra = self._spectrum_law().sample_mcmc(n_samples, rng, **self.mcmc_options)
            return self._polar_points(n_samples, rng, spectra)
        start = self.footpoint
        if self.truncated and not self._distances(start[None], self.center)[0] < self.radius:
            start = self.center
        return self._manifold_chains().sample(start, n_samples, rng)

    # ------------------------------------------------------------------ public API

    def _use_exact(self):
        if self.method != "auto":
            return self.method == "exact"
        if self.geometry.family == "spd_affine":
            return self.space.n <= MAX_EXACT_SPD_SIZE
        return self.has_exact_sampler

    def sample(self, n_samples=1, random_state=None, give_up=True):
        """Draw points from the law.

        Parameters
        ----------
        n_samples : int
        random_state : None, int or numpy.random.Generator
        give_up : bool
            Whether a rejection sampler stops (``LowAcceptanceError``, or Metropolis-Hastings
            under ``method="auto"``) once it accepts fewer than 1 in 1,000 of at least
            20,000 proposals. A private release passes False: there the acceptance rate
            depends on the footpoint, so giving up would disclose it.

        Returns
        -------
        points : array-like, shape=[n_samples, *space.shape] ([*space.shape] if n_samples == 1)
        """
        n_samples = check_positive_int(n_samples, "n_samples")
        rng = get_rng(random_state)
        points = None
        if self._use_exact():
            try:
                min_acceptance = MIN_ACCEPTANCE if give_up else 0.0
                points = self._exact_points(n_samples, rng, min_acceptance)
                self.method_ = "exact"
            except LowAcceptanceError:
                if self.method == "exact":
                    raise
        if points is None:
            points, self.method_ = self._mcmc_points(n_samples, rng), "mcmc"
        self._check_representable(points)
        return to_backend(points[0] if n_samples == 1 else points)

    def _check_representable(self, points):
        """Raise if rounding pushed draws off the space (SPD spectra spanning > 1e16)."""
        on_space = np.atleast_1d(
            to_numpy(self.space.belongs(to_backend(points), atol=self.atol))
        ).astype(bool)
        if not on_space.all():
            raise ValueError(
                f"{int((~on_space).sum())} of {len(on_space)} draws are not on "
                f"{type(self.space).__name__} in float64: scale={self.scale} spreads them "
                "beyond double precision; use a smaller scale or a truncated law (radius=)"
            )

    def log_normaliser(self):
        """log C(eta, sigma) when known in closed form or by 1-d quadrature, else None."""
        if not self.is_normalised:
            return None
        dim = self.geometry.dim
        law = RadialLaw(dim, self._unit / self.scale, RADIAL_CURVATURE[self.geometry.family])
        return log_sphere_area(dim) + law.log_normaliser() + dim * math.log(self._unit)

    def log_prob(self, point):
        """Log-density w.r.t. the Riemannian volume of ``space.metric``.

        Normalised when ``is_normalised`` (see ``log_normaliser``); otherwise
        -rho(eta, x)/sigma, i.e. up to an additive constant. -inf outside the ball.

        Parameters
        ----------
        point : array-like, shape=[..., *space.shape]

        Returns
        -------
        log_prob : array-like, shape=[...]
        """
        points = to_numpy(point)
        batch_shape = points.shape[: points.ndim - self.footpoint.ndim]
        flat = points.reshape((-1,) + self.footpoint.shape)
        values = self._log_target(flat) - (self.log_normaliser() or 0.0)
        if not batch_shape:  # to_backend would return shape [1]
            return gs.array(float(values[0]))
        return to_backend(values.reshape(batch_shape))
