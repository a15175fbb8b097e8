"""Riemannian Laplace mechanism: Reimherr et al. (2021), Figure 1; Han et al. (2024),
Figures 1a and 2a.

Three measurements, all in one run (``python -m benchmarks laplace``):

* Sensitivity (Reimherr et al., Figure 1, panels 1 and 3). The geodesic distance between
  the Frechet means (``exact_frechet_mean``) of replace-one neighbours, against Theorem 2's
  bound ``frechet_mean_sensitivity``, on SPD(2) affine-invariant (data: Wishart W(I/2, 2)
  kept in B_1.5(I), Reimherr et al. A.2.1), S^2 (polar angle uniform on [0, pi/8),
  Reimherr et al. A.3.1) and SPD(2) Bures-Wasserstein (W(I/2, 2) kept in B_0.15(I); the
  curvature bound comes from the ball, ``laplace.ball_geometry``). Three kinds of
  neighbours: "random" (x_n and x'_n two fresh draws), "adversarial" (the other n - 1
  points drawn from the data law, x_n and x'_n any two of M points on the boundary of the
  ball, among them antipodal pairs: the largest of the M (M - 1) / 2 distances), and the
  same with the n - 1 others stacked at the centre ("cluster_center") or at one point just
  inside the boundary ("cluster_rim").
* Utility (Reimherr et al., Figure 1, panels 2 and 4), epsilon = 1 (not stated in the
  paper): the Euclidean distance (vech coordinates for SPD, R^3 for S^2) between the
  Frechet mean and its release, for the Riemannian Laplace mechanism calibrated by
  Theorem 2 (``manifold``) and the l2 Laplace in the ambient space with sensitivity
  2 r_E / n, either returned unprojected as in the paper (``ambient_raw``, noise from
  ``baselines.l2_laplace_noise``) or projected back (``ambient_projected``,
  ``baselines.ambient_laplace_release``). On S^2 a fourth curve, ``manifold_empirical``,
  uses the paper's calibration (supplement B.1): the Lemma 1 constant 2r(2 - h) replaced
  by its value measured on a grid (not a proven bound).
* Excess risk (Han et al., Figures 1a and 2a), epsilon = 0.1, delta = 1e-3:
  F(x) - F(x*) with F(x) = mean_i d(x, x_i)^2 (Han et al., eq. 3), x* from
  ``exact_frechet_mean``. "Diameter bound D" is read as: all data in the geodesic ball
  B_{D/2}(I) (diameter <= D), so the Laplace mechanisms use radius r = D/2 and DP-RGD the
  clip norm D. Methods:

  - ``dp_rgd``: ``PrivateFrechetMean(method="rgd")`` with its defaults (noise-aware step
    0.5 s, T from the privacy horizon); ``dp_rgd_han``: Han et al.'s T = n, eta = 0.01;
  - ``fm_lap``: ``PrivateFrechetMean(method="laplace")`` (untruncated, sigma =
    Delta/eps; on Bures-Wasserstein truncated to the ball, sigma = 2 Delta / eps);
    ``fm_lap_truncated``: ``RiemannianLaplace`` restricted to the data ball, sigma =
    2 Delta / eps (the normalising constant then depends on the footpoint);
    ``fm_lap_han``: untruncated at Han et al.'s sigma = 4D/(n eps) (where that law
    exists);
  - ``fm_kng``: ``baselines.knorm_gradient_release``, Metropolis-Hastings burn-in
    ``kng_burn_in``, one chain per release (checked against 4x the burn-in at n = 30);
  - ``public_center``: the ball's centre I, a reference that reads no data.

  Problems: SPD(2) affine-invariant, D = 1 (data W(I/2, 2) kept in B_0.5(I)); SPD(2)
  Bures-Wasserstein, D = 0.3 (data W(I/2, 2) kept in B_0.15(I)). The Bures-Wasserstein
  curvature is unbounded near singular matrices; on the public ball every eigenvalue is
  at least (sqrt(lambda_min(I)) - r)^2 (Mirsky's inequality), where the curvature is at
  most 3 / (lambda_1 + lambda_2) <= 3 / (2 (1 - r)^2) (Han et al., Sect. 5.3), which
  gives Theorem 2's Delta; the untruncated law has no such bound, so ``fm_lap_han`` does
  not run there.

BLAS runs single-threaded (threadpoolctl), as in the other benchmarks.
"""

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric, SPDMatrices
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp._backend import to_numpy
from geomstats_dp.distributions.laplace import (
    RiemannianLaplace,
    curvature_bounds,
    frechet_mean_sensitivity,
    laplace_scale,
)
from geomstats_dp.distributions.laplace.baselines import (
    ambient_laplace_release,
    ambient_mean_sensitivity,
    knorm_gradient_release,
    l2_laplace_noise,
)
from geomstats_dp.distributions.laplace.sensitivity import curvature_correction
from geomstats_dp.distributions.laplace.spd_polar import scale_limit as spd_scale_limit
from geomstats_dp.learning import NoiseDominatesWarning, PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean

UTILITY_EPSILON = 1.0
RISK_EPSILON = 0.1
RISK_DELTA = 1e-3
INSIDE = 1 - 1e-6  # boundary points are put just inside the open ball
WISHART_BATCH = 8192
EMPIRICAL_GRID = (9, 72)  # (footpoints along a radius, points on the boundary circle)
HAN_STEP = 0.01
METHODS = {  # name -> (label, colour)
    "dp_rgd": ("DP-RGD (library defaults)", "tab:blue"),
    "dp_rgd_han": ("DP-RGD (Han et al.: T = n, eta = 0.01)", "tab:cyan"),
    "fm_lap": ("FM-LAP (PrivateFrechetMean)", "tab:red"),
    "fm_lap_truncated": ("FM-LAP truncated to the ball", "tab:orange"),
    "fm_lap_han": ("FM-LAP at Han et al.'s scale 4D/(n eps)", "tab:pink"),
    "fm_kng": ("FM-KNG", "tab:green"),
    "public_center": ("public centre I (reads no data)", "tab:gray"),
}
MECHANISMS = {
    "manifold": ("Riemannian Laplace (Theorem 2)", "tab:blue"),
    "manifold_empirical": ("Riemannian Laplace (Reimherr et al.'s empirical constant)",
                           "tab:purple"),
    "ambient_raw": ("ambient Laplace, unprojected (Reimherr et al.)", "tab:red"),
    "ambient_projected": ("ambient Laplace, projected", "tab:orange"),
}


@dataclass(frozen=True)
class Settings:
    """Sizes of one run (full or quick)."""

    sensitivity_sizes: tuple
    sensitivity_datasets: int  # datasets per n for "random" and "adversarial"
    boundary_points: int  # M, even
    utility_sizes: tuple
    utility_datasets: int
    utility_releases_per_mean: int
    risk_sizes: tuple
    risk_datasets: int
    releases_per_dataset: int
    kng_burn_in: int
    burn_in_check: tuple  # (n, factor) of the FM-KNG burn-in check; () to skip


FULL = Settings(
    sensitivity_sizes=(10, 20, 50, 100, 200, 500),
    sensitivity_datasets=10,
    boundary_points=24,
    utility_sizes=(10, 20, 50, 100, 200, 500),
    utility_datasets=200,
    utility_releases_per_mean=5,
    risk_sizes=(10, 30, 100, 300, 1000),
    risk_datasets=5,
    releases_per_dataset=4,
    kng_burn_in=2000,
    burn_in_check=(30, 4),
)
QUICK = Settings(
    sensitivity_sizes=(10, 100),
    sensitivity_datasets=2,
    boundary_points=8,
    utility_sizes=(10, 100),
    utility_datasets=20,
    utility_releases_per_mean=2,
    risk_sizes=(10, 100),
    risk_datasets=1,
    releases_per_dataset=2,
    kng_burn_in=300,
    burn_in_check=(),
)


@dataclass(frozen=True)
class Setup:
    """A space, the public ball B_radius(center) holding the data, and the data law."""

    name: str
    space: object
    center: np.ndarray
    radius: float
    sampler: object  # (setup, n, rng) -> points [n, *shape], all in the ball

    def sample(self, n_samples, rng):
        """n_samples draws of the data law, numpy [n_samples, *shape]."""
        return self.sampler(self, n_samples, rng)

    def distances(self, points, point):
        """Geodesic distances, numpy [k]."""
        return np.atleast_1d(to_numpy(self.space.metric.dist(points, point)))

    def boundary(self, n_points, rng):
        """n_points (even) points just inside the boundary, in antipodal pairs about the
        centre: Exp_center(+-INSIDE * radius * u), u uniform unit tangent vectors."""
        half = self.unit_directions(n_points // 2, rng)
        directions = np.concatenate([half, -half])
        return to_numpy(self.space.metric.exp(INSIDE * self.radius * directions, self.center))

    def unit_directions(self, n_directions, rng):
        """Unit tangent vectors at the centre: S^2 (centre e_3) or SPD(2) at I, normalised
        in the space's metric (tr(UV) affine-invariant, tr(UV) / 4 Bures-Wasserstein)."""
        if isinstance(self.space, Hypersphere):
            angles = rng.uniform(0, math.pi, n_directions)  # the centre is the north pole
            return np.stack([np.cos(angles), np.sin(angles), 0 * angles], axis=1)
        vectors = rng.standard_normal((n_directions, 3))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        off_diagonal = vectors[:, 1] / math.sqrt(2)
        directions = np.stack([vectors[:, 0], off_diagonal, off_diagonal, vectors[:, 2]], 1)
        directions = directions.reshape(-1, 2, 2)
        norms = to_numpy(self.space.metric.norm(directions, self.center))
        return directions / norms.reshape(-1, 1, 1)


def wishart_in_ball(setup, n_samples, rng):
    """Draws of the Wishart W(I/2, 2) (Reimherr et al., A.2.1) kept when inside the ball."""
    kept, count = [], 0
    while count < n_samples:
        factors = rng.standard_normal((WISHART_BATCH, 2, 2)) * math.sqrt(0.5)
        draws = factors @ np.swapaxes(factors, 1, 2)
        inside = draws[setup.distances(draws, setup.center) < setup.radius]
        kept.append(inside)
        count += len(inside)
    return np.concatenate(kept)[:n_samples]


def spherical_cap(setup, n_samples, rng):
    """Polar angle uniform on [0, radius), azimuth uniform (Reimherr et al., A.3.1); centre e_3."""
    polar = rng.uniform(0, setup.radius, n_samples)
    azimuth = rng.uniform(0, 2 * math.pi, n_samples)
    return np.stack([np.sin(polar) * np.cos(azimuth), np.sin(polar) * np.sin(azimuth),
                     np.cos(polar)], axis=1)


def spd_space(metric=None):
    """SPD(2), affine-invariant by default."""
    if metric is None:
        return SPDMatrices(2)
    space = SPDMatrices(2, equip=False)
    space.equip_with_metric(metric)
    return space


def reimherr_setups():
    """Reimherr et al.'s two examples: SPD(2) affine-invariant, r = 1.5; S^2, r = pi/8."""
    return [
        Setup("spd2_affine", spd_space(), np.eye(2), 1.5, wishart_in_ball),
        Setup("sphere2", Hypersphere(2), np.array([0.0, 0.0, 1.0]), math.pi / 8,
              spherical_cap),
    ]


def han_setups():
    """Han et al.'s synthetic problems: radius D/2 with D = 1 (affine-invariant), 0.3 (BW)."""
    return [
        Setup("spd2_affine", spd_space(), np.eye(2), 0.5, wishart_in_ball),
        Setup("spd2_bures_wasserstein", spd_space(SPDBuresWassersteinMetric), np.eye(2),
              0.15, wishart_in_ball),
    ]


def ambient_coordinates(points):
    """vech for symmetric matrices [..., 2, 2] -> [..., 3]; vectors unchanged."""
    points = np.asarray(points)
    if points.shape[-2:] == (2, 2):
        return points[..., [0, 0, 1], [0, 1, 1]]
    return points


# ---------------------------------------------------------------- part 1: sensitivity


def neighbour_means(setup, others, replacements):
    """Frechet means of others + {z}, one per replacement z, numpy [k, *shape]."""
    return np.stack([
        to_numpy(exact_frechet_mean(setup.space, np.concatenate([others, z[None]])))
        for z in replacements
    ])


def largest_pairwise_distance(setup, means):
    """max_{i<j} d(means_i, means_j)."""
    return max(setup.distances(means[i + 1:], means[i]).max() for i in range(len(means) - 1))


def sensitivity_rows(setup, settings):
    """Observed replace-one distances against Theorem 2's bound, for every n."""
    rows = []
    for n_samples in settings.sensitivity_sizes:
        rng = np.random.default_rng([1, n_samples])
        bound = frechet_mean_sensitivity(setup.space, setup.radius, n_samples, setup.center)
        observed = []
        for _ in range(settings.sensitivity_datasets):
            others = setup.sample(n_samples - 1, rng)
            pair = neighbour_means(setup, others, setup.sample(2, rng))
            observed.append(("random", largest_pairwise_distance(setup, pair)))
            boundary = setup.boundary(settings.boundary_points, rng)
            means = neighbour_means(setup, others, boundary)
            observed.append(("adversarial", largest_pairwise_distance(setup, means)))
        rim = setup.boundary(2, rng)[0]
        for name, point in (("cluster_center", setup.center), ("cluster_rim", rim)):
            others = np.repeat(point[None], n_samples - 1, axis=0)
            means = neighbour_means(setup, others, setup.boundary(settings.boundary_points, rng))
            observed.append((name, largest_pairwise_distance(setup, means)))
        rows += [{"space": setup.name, "radius": setup.radius, "n": n_samples,
                  "configuration": name, "observed": value, "theorem2_bound": bound,
                  "flat_bound_2r_over_n": 2 * setup.radius / n_samples,
                  "observed_over_bound": value / bound} for name, value in observed]
    return rows


# ---------------------------------------------------------------- part 2: utility


def empirical_lemma1_constant(setup):
    """Reimherr et al. supplement B.1 on S^2: max |Log_m x - Log_m y| over a grid of footpoints m on
    a radius of the ball (by symmetry) and x, y on its boundary circle."""
    n_footpoints, n_boundary = EMPIRICAL_GRID
    azimuth = np.linspace(0, 2 * math.pi, n_boundary, endpoint=False)
    polar = INSIDE * setup.radius
    boundary = np.stack([np.sin(polar) * np.cos(azimuth), np.sin(polar) * np.sin(azimuth),
                         np.full(n_boundary, np.cos(polar))], axis=1)
    largest = 0.0
    for angle in np.linspace(0, polar, n_footpoints):
        footpoint = np.array([np.sin(angle), 0.0, np.cos(angle)])
        logs = to_numpy(setup.space.metric.log(boundary, footpoint))
        gaps = np.linalg.norm(logs[:, None] - logs[None], axis=-1)
        largest = max(largest, float(gaps.max()))
    return largest


def utility_calibration(setup, n_samples):
    """Laplace scales (geodesic units) of the manifold mechanisms and the ambient l2
    sensitivity, at epsilon = UTILITY_EPSILON."""
    sensitivity = frechet_mean_sensitivity(setup.space, setup.radius, n_samples)
    calibration = {
        "manifold": laplace_scale(sensitivity, UTILITY_EPSILON, setup.space),
        "ambient_sensitivity": ambient_mean_sensitivity(
            setup.space, setup.radius, n_samples, setup.center),
    }
    if isinstance(setup.space, Hypersphere):
        correction = curvature_correction(setup.radius, curvature_bounds(setup.space)[1])
        empirical = empirical_lemma1_constant(setup) / (n_samples * correction)
        calibration["manifold_empirical"] = laplace_scale(empirical, UTILITY_EPSILON,
                                                          setup.space)
    return calibration


def on_manifold(setup, point):
    """Whether an ambient (unprojected) release lies on the space."""
    if isinstance(setup.space, Hypersphere):
        return False  # a measure-zero subset of R^3
    return bool(np.linalg.eigvalsh(point).min() > 0)


def raw_ambient_release(setup, mean, scale, rng):
    """mean + l2 Laplace noise in vech / R^3 coordinates, not projected (Reimherr et al.,
    Sect. 5)."""
    if isinstance(setup.space, Hypersphere):
        return mean + l2_laplace_noise(3, scale, rng)
    a, b, c = l2_laplace_noise(3, scale, rng)
    return mean + np.array([[a, b], [b, c]])


def utility_releases(setup, mean, calibration, rng):
    """One release of every mechanism: name -> point (numpy)."""
    ambient = calibration["ambient_sensitivity"]
    releases = {
        "ambient_raw": raw_ambient_release(setup, mean, ambient / UTILITY_EPSILON, rng),
        "ambient_projected": ambient_laplace_release(setup.space, mean, ambient,
                                                     UTILITY_EPSILON, rng),
    }
    for name in ("manifold", "manifold_empirical"):
        if name in calibration:
            law = RiemannianLaplace(setup.space, mean, calibration[name])
            releases[name] = law.sample(random_state=rng)
    return {name: to_numpy(point) for name, point in releases.items()}


def utility_summary(setup, n_samples, calibration, records):
    """Mean Euclidean distance with its standard error, and geodesic distances."""
    rows = []
    for mechanism in MECHANISMS:
        values = [record[mechanism] for record in records if mechanism in record]
        if not values:
            continue
        euclidean, geodesic, inside = (np.array(column) for column in zip(*values))
        scale = calibration.get(mechanism,
                                calibration["ambient_sensitivity"] / UTILITY_EPSILON)
        rows.append({
            "space": setup.name, "n": n_samples, "mechanism": mechanism,
            "epsilon": UTILITY_EPSILON, "scale": scale, "releases": len(euclidean),
            "mean_euclidean": euclidean.mean(),
            "se_euclidean": euclidean.std(ddof=1) / math.sqrt(len(euclidean)),
            "mean_geodesic": np.nanmean(geodesic) if np.isfinite(geodesic).any() else np.nan,
            "median_geodesic": np.nanmedian(geodesic) if np.isfinite(geodesic).any() else np.nan,
            "fraction_on_manifold": inside.mean(),
        })
    return rows


def utility_record(setup, mean, calibration, rng):
    """mechanism -> (Euclidean distance, geodesic distance or NaN, on the space) of one
    release of every mechanism."""
    record = {}
    for name, point in utility_releases(setup, mean, calibration, rng).items():
        euclidean = np.linalg.norm(ambient_coordinates(point - mean))
        inside = name != "ambient_raw" or on_manifold(setup, point)
        geodesic = setup.distances(point, mean)[0] if inside else np.nan
        record[name] = (euclidean, geodesic, inside)
    return record


def utility_rows(setup, settings):
    """Distances of each mechanism's release from the Frechet mean, for every n."""
    rows = []
    for n_samples in settings.utility_sizes:
        rng = np.random.default_rng([2, n_samples])
        calibration = utility_calibration(setup, n_samples)
        records = []
        for _ in range(settings.utility_datasets):
            mean = to_numpy(exact_frechet_mean(setup.space, setup.sample(n_samples, rng)))
            for _ in range(settings.utility_releases_per_mean):
                records.append(utility_record(setup, mean, calibration, rng))
        rows += utility_summary(setup, n_samples, calibration, records)
    return rows


# ---------------------------------------------------------------- part 3: excess risk


def is_bures_wasserstein(setup):
    """Whether the setup's space carries the Bures-Wasserstein metric."""
    return isinstance(setup.space.metric, SPDBuresWassersteinMetric)


def truncated_laplace_scale(setup, n_samples):
    """Scale of the Laplace law truncated to the data ball: 2 Delta / eps (the
    normalising constant depends on the footpoint).

    Delta from Theorem 2 (``frechet_mean_sensitivity``, which bounds the
    Bures-Wasserstein curvature on the ball: ``laplace.ball_geometry``).
    """
    sensitivity = frechet_mean_sensitivity(setup.space, setup.radius, n_samples,
                                           setup.center)
    return laplace_scale(sensitivity, RISK_EPSILON, setup.space, truncated=True)


def gradient_release(setup, points, variant, seed):
    """DP-RGD: library defaults, or Han et al.'s T = n and eta = 0.01."""
    options = {}
    if variant == "dp_rgd_han":
        options = {"n_iter": len(points), "step_size": HAN_STEP}
    estimator = PrivateFrechetMean(
        setup.space, epsilon=RISK_EPSILON, delta=RISK_DELTA, method="rgd",
        clip_norm=2 * setup.radius, random_state=seed, **options)
    with warnings.catch_warnings():  # NoiseDominatesWarning at small n: measured here
        warnings.simplefilter("ignore", NoiseDominatesWarning)
        return to_numpy(estimator.fit(points).estimate_)


def release_or_nan(draw, shape):
    """``draw()``, or a NaN matrix of ``shape`` (scored as off SPD) when the library
    refuses a Laplace draw that float64 cannot represent (scales near the SPD limit)."""
    try:
        return draw()
    except ValueError as error:
        if "beyond double precision" not in str(error):
            raise
        return np.full(shape, np.nan)


def releases(setup, method, points, optimum, count, rng, settings):
    """``count`` releases of ``method`` on one dataset, numpy [count, *shape]; None if the
    method does not run on this space."""
    if method == "public_center":
        return np.repeat(setup.center[None], count, axis=0)
    if method.startswith("dp_rgd"):
        seeds = rng.integers(2**32, size=count)
        draws = [gradient_release(setup, points, method, int(seed)) for seed in seeds]
    elif method == "fm_lap_truncated":
        law = RiemannianLaplace(setup.space, optimum, truncated_laplace_scale(setup, len(points)),
                                radius=setup.radius, center=setup.center,
                                mcmc_options={"burn_in": settings.kng_burn_in})
        draws = law.sample(count, random_state=rng)
    elif method == "fm_lap_han":
        if is_bures_wasserstein(setup):
            return None  # Han et al.'s untruncated law needs a global curvature bound
        # Han et al., Sect. 6.1: sigma = 4 D / (n eps), D taken as the radius and Theorem 1's
        # general factor 2; above the existence limit of the untruncated law (n = 10) the
        # paper's setting cannot be run.
        scale = 2 * frechet_mean_sensitivity(setup.space, 2 * setup.radius, len(points))
        scale /= RISK_EPSILON
        if scale >= spd_scale_limit(setup.space.n):
            return None
        law = RiemannianLaplace(setup.space, optimum, scale)
        draws = [release_or_nan(lambda: law.sample(1, random_state=rng), optimum.shape)
                 for _ in range(count)]
    elif method == "fm_lap":
        if is_bures_wasserstein(setup):
            # the estimator releases the law of fm_lap_truncated there (same scale and
            # ball: tests/laplace/test_bures_wasserstein.py); not sampled twice
            return None
        draws = [release_or_nan(
            lambda: PrivateFrechetMean(setup.space, epsilon=RISK_EPSILON, method="laplace",
                                       radius=setup.radius, center=setup.center,
                                       random_state=rng).fit(points).estimate_,
            optimum.shape) for _ in range(count)]
    else:
        draws = knorm_gradient_release(setup.space, points, RISK_EPSILON, setup.radius,
                                       setup.center, n_samples=count, random_state=rng,
                                       burn_in=settings.kng_burn_in)
    return np.stack([to_numpy(draw) for draw in draws]).reshape((count, 2, 2))


def risk(setup, points, point):
    """F(x) = mean_i d(x, x_i)^2 (Han et al., eq. 3)."""
    return float(np.mean(to_numpy(setup.space.metric.squared_dist(points, point))))


def release_quality(setup, points, optimum, best, release):
    """(excess risk, distance to x*) of a release; (inf, inf) when float64 round-off left
    it off SPD or too ill-conditioned for the risk to be finite (Laplace draws near the
    scale limit have eigenvalues beyond e^(+-30))."""
    if np.linalg.eigvalsh(release).min() <= 0:
        return math.inf, math.inf
    excess = risk(setup, points, release) - best
    if not np.isfinite(excess):
        return math.inf, math.inf
    return excess, setup.distances(release, optimum)[0]


def excess_risk_rows(setup, settings):
    """One row per release: method, n, excess risk, distance to x*, seconds per release."""
    rows = []
    for n_samples in settings.risk_sizes:
        rng = np.random.default_rng([3, n_samples])
        for dataset in range(settings.risk_datasets):
            points = setup.sample(n_samples, rng)
            optimum = to_numpy(exact_frechet_mean(setup.space, points))
            best = risk(setup, points, optimum)
            for method in METHODS:
                start = time.perf_counter()
                draws = releases(setup, method, points, optimum, settings.releases_per_dataset,
                                 rng, settings)
                seconds = (time.perf_counter() - start) / settings.releases_per_dataset
                if draws is None:
                    continue
                for release in draws:
                    excess, distance = release_quality(setup, points, optimum, best, release)
                    rows.append({"space": setup.name, "n": n_samples, "dataset": dataset,
                                 "method": method, "excess_risk": excess,
                                 "distance_to_optimum": distance,
                                 "seconds_per_release": seconds})
        print(f"  {setup.name} n = {n_samples} done", flush=True)
    return rows


def risk_summary(rows):
    """Mean, standard error and median of the excess risk per (space, n, method); the
    mean is inf when a release fell off SPD (counted in ``non_spd_releases``)."""
    groups = {}
    for row in rows:
        groups.setdefault((row["space"], row["n"], row["method"]), []).append(row)
    summary = []
    for (space, n_samples, method), group in groups.items():
        values = np.array([row["excess_risk"] for row in group])
        summary.append({
            "space": space, "n": n_samples, "method": method, "releases": len(values),
            "non_spd_releases": int(np.isinf(values).sum()),
            "mean_excess_risk": values.mean(),
            "se_excess_risk": values.std(ddof=1) / math.sqrt(len(values))
            if np.isfinite(values).all() else math.inf,
            "median_excess_risk": np.median(values),
            "median_distance_to_optimum": np.median([row["distance_to_optimum"]
                                                     for row in group]),
            "seconds_per_release": np.mean([row["seconds_per_release"] for row in group]),
        })
    return summary


def burn_in_rows(setup, settings):
    """FM-KNG at burn-in B and factor * B on one dataset: a check that B suffices."""
    n_samples, factor = settings.burn_in_check
    rng = np.random.default_rng([4, n_samples])
    points = setup.sample(n_samples, rng)
    best = risk(setup, points, to_numpy(exact_frechet_mean(setup.space, points)))
    chains = 4 * settings.releases_per_dataset
    rows = []
    for burn_in in (settings.kng_burn_in, factor * settings.kng_burn_in):
        start = time.perf_counter()
        draws = to_numpy(knorm_gradient_release(
            setup.space, points, RISK_EPSILON, setup.radius, setup.center, n_samples=chains,
            random_state=rng, burn_in=burn_in)).reshape((chains, 2, 2))
        values = np.array([risk(setup, points, x) - best for x in draws])
        rows.append({"space": setup.name, "n": n_samples, "burn_in": burn_in,
                     "chains": chains, "mean_excess_risk": values.mean(),
                     "se_excess_risk": values.std(ddof=1) / math.sqrt(chains),
                     "seconds": time.perf_counter() - start})
    return rows


# ---------------------------------------------------------------- plots


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finish(plt, fig, axes, path, ylabel):
    for axis in axes:
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("sample size n")
        axis.set_ylabel(ylabel)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sensitivity(path, rows, setups):
    """Random-replacement dots, their mean, the adversarial maximum and the bounds."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(setups), figsize=(5.2 * len(setups), 4))
    for axis, setup in zip(axes, setups):
        mine = [row for row in rows if row["space"] == setup.name]
        sizes = sorted({row["n"] for row in mine})

        def values(configurations, n_samples):
            return [row["observed"] for row in mine
                    if row["configuration"] in configurations and row["n"] == n_samples]

        for n_samples in sizes:
            axis.plot([n_samples] * len(values(("random",), n_samples)),
                      values(("random",), n_samples), ".", color="tab:blue", alpha=0.5)
        axis.plot(sizes, [np.mean(values(("random",), n)) for n in sizes], "-",
                  color="tab:blue", label="random replacement (dots, mean)")
        adversarial = ("adversarial", "cluster_center", "cluster_rim")
        axis.plot(sizes, [max(values(adversarial, n)) for n in sizes], "s-",
                  color="tab:green", label="adversarial (max)")
        axis.plot(sizes, [next(row["theorem2_bound"] for row in mine if row["n"] == n)
                          for n in sizes], "-", color="tab:red", label="Theorem 2 bound")
        axis.plot(sizes, [2 * setup.radius / n for n in sizes], "--", color="grey",
                  label="2r/n (flat-space bound)")
        axis.set_title(f"{setup.name}, r = {setup.radius:.4g}", fontsize=10)
    _finish(plt, fig, axes, path, "distance between neighbouring Frechet means")


def plot_utility(path, rows, setups):
    """Mean Euclidean distance +- 2 SE of each mechanism."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(setups), figsize=(5.2 * len(setups), 4))
    for axis, setup in zip(axes, setups):
        for mechanism, (label, colour) in MECHANISMS.items():
            mine = sorted((row for row in rows if row["space"] == setup.name
                           and row["mechanism"] == mechanism), key=lambda row: row["n"])
            if not mine:
                continue
            sizes = [row["n"] for row in mine]
            means = np.array([row["mean_euclidean"] for row in mine])
            errors = np.array([2 * row["se_euclidean"] for row in mine])
            axis.plot(sizes, means, "o-", color=colour, label=label)
            axis.fill_between(sizes, means - errors, means + errors, color=colour, alpha=0.2)
        axis.set_title(f"{setup.name}, epsilon = {UTILITY_EPSILON:g}", fontsize=10)
    _finish(plt, fig, axes, path, "mean Euclidean distance to the Frechet mean")


def plot_excess_risk(path, summary, setups):
    """Mean excess risk with +- 2 SE error bars (lower end clipped) per method; cells
    with a release off SPD (infinite mean) are left out."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(setups), figsize=(5.2 * len(setups), 4))
    for axis, setup in zip(axes, setups):
        for method, (label, colour) in METHODS.items():
            mine = sorted((row for row in summary if row["space"] == setup.name
                           and row["method"] == method and math.isfinite(row["mean_excess_risk"])),
                          key=lambda row: row["n"])
            if not mine:
                continue
            means = np.array([row["mean_excess_risk"] for row in mine])
            errors = np.array([2 * row["se_excess_risk"] for row in mine])
            lower = np.minimum(errors, 0.9 * means)
            axis.errorbar([row["n"] for row in mine], means, yerr=[lower, errors], fmt="o-",
                          color=colour, label=label, capsize=3)
        axis.set_title(f"{setup.name}, D = {2 * setup.radius:g}, epsilon = {RISK_EPSILON:g}, "
                       f"delta = {RISK_DELTA:g}", fontsize=9)
    _finish(plt, fig, axes, path, "excess risk F(x) - F(x*)")


# ---------------------------------------------------------------- entry point


def _report(summary, utility, sensitivity):
    worst = {}
    for row in sensitivity:
        key = (row["space"], row["n"])
        worst[key] = max(worst.get(key, 0.0), row["observed_over_bound"])
    for (space, n_samples), ratio in worst.items():
        print(f"  sensitivity {space} n = {n_samples}: max observed / bound = {ratio:.3f}")
    for row in utility:
        print(f"  utility {row['space']} n = {row['n']} {row['mechanism']}: "
              f"{row['mean_euclidean']:.4g} +- {2 * row['se_euclidean']:.2g}")
    for row in summary:
        print(f"  risk {row['space']} n = {row['n']} {row['method']}: "
              f"{row['mean_excess_risk']:.4g} +- {2 * row['se_excess_risk']:.2g} "
              f"({row['seconds_per_release']:.3g} s per release)")


def run(output_dir, quick=False):
    """Run the benchmark; write ``laplace[_quick]_*.csv`` and three plots."""
    settings = QUICK if quick else FULL
    prefix = "laplace_quick" if quick else "laplace"
    start = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        setups_reimherr, setups_han = reimherr_setups(), han_setups()
        sensitivity_setups = setups_reimherr + [setups_han[1]]  # + Bures-Wasserstein, r = 0.15
        sensitivity = [row for setup in sensitivity_setups
                       for row in sensitivity_rows(setup, settings)]
        print(f"sensitivity: {time.perf_counter() - start:.0f} s", flush=True)
        utility = [row for setup in setups_reimherr for row in utility_rows(setup, settings)]
        print(f"utility: {time.perf_counter() - start:.0f} s", flush=True)
        runs = [row for setup in setups_han for row in excess_risk_rows(setup, settings)]
        burn_in = burn_in_rows(setups_han[0], settings) if settings.burn_in_check else []
    summary = risk_summary(runs)
    write_csv(output_dir / f"{prefix}_sensitivity.csv", sensitivity)
    write_csv(output_dir / f"{prefix}_utility.csv", utility)
    write_csv(output_dir / f"{prefix}_excess_risk_runs.csv", runs)
    write_csv(output_dir / f"{prefix}_excess_risk.csv", summary)
    if burn_in:
        write_csv(output_dir / f"{prefix}_kng_burn_in.csv", burn_in)
    plot_sensitivity(output_dir / f"{prefix}_sensitivity.png", sensitivity,
                     sensitivity_setups)
    plot_utility(output_dir / f"{prefix}_utility.png", utility, setups_reimherr)
    plot_excess_risk(output_dir / f"{prefix}_excess_risk.png", summary, setups_han)
    _report(summary, utility, sensitivity)
    for row in burn_in:
        print(f"  FM-KNG burn-in {row['burn_in']}: {row['mean_excess_risk']:.4g} "
              f"+- {2 * row['se_excess_risk']:.2g}")
    print(f"laplace benchmark: {time.perf_counter() - start:.0f} s", flush=True)
