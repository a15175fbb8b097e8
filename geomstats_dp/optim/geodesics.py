"""The exponential map and geodesic interpolation the loop uses, in closed form where known.

``geodesics_for(space)`` gives ``exp(tangent_vec, base_point)`` and
``interpolate(start, end, t) = Exp_start(t Log_start(end))`` (the output trackers' running
averages). On SPD with the affine-invariant metric (possibly scaled: the geodesics are
the same) both are one eigendecomposition of a whitened matrix. Any F with F F^T = P
(F = P^(1/2) O, O orthogonal) gives the same maps as P^(1/2): with
M = F^-1 V F^-T = Q diag(m) Q^T,

    Exp_P(V) = F expm(M) F^T = G G^T,    G = F Q diag(exp(m / 2)),

and Exp_P(t Log_P(X)) the same with M = F^-1 X F^-T and m^(t/2), G being a factor of
the new point (its inverse, diag(exp(-m / 2)) Q^T F^-1, costs one more product). These
are the formulas geomstats' ``SPDAffineMetric`` evaluates through several ``powermh``
calls. On SPD(2) the factor is G = F h(M), h = exp(. / 2) or (.)^(t/2) of the symmetric M
in closed form (``symmetric_2x2``), and G^-1 = (1/h)(M) F^-1: no ``eigh``. Other metrics
use geomstats' ``exp`` and ``log``. Every point ``exp`` forms is kept on the space
(``optim.onto_space``): a point rounding left it (an SPD point made indefinite by a huge
noisy step, a hyperboloid point too far from the canonical point for float64) is
projected back; any other is returned unchanged. On the hyperboloid, ``exp`` is
geomstats' formula cosh|V| P + sinh|V| / |V| V, normalised as geomstats does only where
the point stays in the ball ``onto_space`` keeps (geomstats' normalisation fails further
out), with |V| capped at ``HYPERBOLOID_MAX_STEP`` (cosh overflows beyond; a step of
that length leaves the ball anyway).
"""

import math

import geomstats.algebra_utils as utils
import geomstats.backend as gs
from geomstats.geometry.euclidean import Euclidean, EuclideanMetric
from geomstats.geometry.hyperboloid import HyperboloidMetric
from geomstats.geometry.hypersphere import HypersphereMetric
from geomstats.geometry.spd_matrices import SPDAffineMetric

from geomstats_dp._backend import add_scaled, to_backend
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.optim.affine_log import square_root_factor
from geomstats_dp.optim.onto_space import (
    HYPERBOLOID_RADIUS,
    SPD_CONDITION_LIMIT,
    floor_spectrum,
    floor_spectrum_2x2,
    minkowski_squared_norm,
    onto_space,
    onto_sphere,
)
from geomstats_dp.optim.symmetric_2x2 import function_coefficients, spectrum_2x2


class Geodesics:
    """geomstats' exp and log of ``metric``.

    Parameters
    ----------
    metric : RiemannianMetric
    space : Manifold or None
        The space the points of ``exp`` are kept on (``optim.onto_space``); None: not
        checked.
    """

    def __init__(self, metric, space=None):
        self.metric = metric
        self.space = space

    def known_factor(self, point):
        """A square-root factor of ``point`` known from an earlier map: None here (the
        closed-form SPD geodesics keep one)."""

    def exp(self, tangent_vec, base_point):
        """Exp_base_point(tangent_vec), shape=[..., *space.shape], kept on the space."""
        return onto_space(self.space, self.metric.exp(tangent_vec, base_point))

    def step(self, direction, coefficient, base_point):
        """Exp_base_point(coefficient direction): a step of the loop (coefficient = -eta),
        the product folded into the map where its closed form allows.

        Parameters
        ----------
        direction : array-like, shape=[*space.shape]
        coefficient : float
        base_point : array-like, shape=[*space.shape]

        Returns
        -------
        point : array-like, shape=[*space.shape]
        """
        return self.exp(coefficient * direction, base_point)

    def interpolate(self, start, end, t):
        """Exp_start(t Log_start(end)): the geodesic from start to end at time t, kept on
        the space as ``exp`` keeps its points."""
        return self.exp(t * self.metric.log(end, start), start)


class SPDAffineGeodesics(Geodesics):
    """Closed forms of the affine-invariant metric (see the module docstring).

    The maps of a single base point keep the factor of the point they return (the
    iterates and the running average each form a chain of such points), so that the next
    map from it starts at the whitening; other base points are factored by one ``eigh``
    (``square_root_factor``). Batches of base points use geomstats' maps.
    """

    def __init__(self, metric, space=None):
        super().__init__(metric, space)
        self._chains = {}  # map name -> (point, factor, inverse factor) of its last output
        self._conditions = {}  # map name -> a bound on the condition number of that point

    def known_factor(self, point):
        """(F, F^-1) with F F^T = point, shapes [n, n], if ``point`` is the last point
        a map returned (the very object), else None."""
        for known, factor, inverse in self._chains.values():
            if known is point:
                return factor, inverse
        return None

    def factor(self, point):
        """(F, F^-1) with F F^T = point: ``known_factor``, else ``square_root_factor``."""
        known = self.known_factor(point)
        return square_root_factor(point) if known is None else known

    def _whitened_function(self, matrix, base_point, half_power, chain):
        """F f(F^-1 M F^-T) F^T for symmetric M [n, n], half_power = sqrt o f; the
        result's factor is kept as the last of ``chain``."""
        factor, inverse = self.factor(base_point)
        if matrix.shape[-1] == 2:
            point, new_factor, new_inverse = (to_backend(part) for part in _map_2x2(
                matrix.tolist(), factor.tolist(), inverse.tolist(), half_power))
        else:
            whitened_vals, whitened_vecs = gs.linalg.eigh(inverse @ matrix @ inverse.T)
            halves = half_power(whitened_vals)
            new_factor = factor @ (whitened_vecs * halves)
            new_inverse = (whitened_vecs.T / halves[:, None]) @ inverse
            point = new_factor @ new_factor.T
            # cond(G G^T) <= cond(base point) (max h / min h)^2: the spectrum is computed
            # only when this bound cannot tell that the point is safely SPD
            spread = halves.tolist()  # one conversion; NaN kept (Python's max skips it)
            ratio = math.nan if math.isnan(sum(spread)) else max(spread) / min(spread)
            bound = self._condition(base_point) * ratio**2
            if not bound <= SPD_CONDITION_LIMIT:
                floored, bound = floor_spectrum(point)
                if floored is not None:  # rounding left SPD: kept on it (``onto_space``)
                    point, new_factor, new_inverse = floored
            self._conditions[chain] = bound
        self._chains[chain] = (point, new_factor, new_inverse)
        return point

    def _condition(self, point):
        """The bound kept on the condition number of ``point`` if a map returned it (the
        very object), else inf."""
        for chain, (known, _, _) in self._chains.items():
            if known is point:
                return self._conditions.get(chain, math.inf)
        return math.inf

    def exp(self, tangent_vec, base_point):
        """F expm(F^-1 V F^-T) F^T."""
        if base_point.ndim > 2 or tangent_vec.ndim > 2:
            return super().exp(tangent_vec, base_point)
        return self._whitened_function(
            tangent_vec, base_point, lambda eigvals: gs.exp(eigvals / 2), "exp")

    def interpolate(self, start, end, t):
        """F (F^-1 X F^-T)^t F^T with F F^T = start, X = end."""
        if start.ndim > 2 or end.ndim > 2:
            return super().interpolate(start, end, t)
        return self._whitened_function(
            end, start, lambda eigvals: eigvals ** (t / 2), "interpolate")


class SphereGeodesics(Geodesics):
    """The sphere's exponential map at one base point in plain array code: the step's
    one projection onto the tangent space folded into the map's coefficients,
    cos|W| P + sin|W| / |W| W with W = c (V - p P), p = <V, P> / <P, P>, from three dot
    products and one scaled sum; geomstats' Taylor expansion only where |W|^2 is below
    its threshold."""

    def exp(self, tangent_vec, base_point):
        """cos|V| P + sin|V| / |V| V, V projected at P, kept on the space."""
        return self.step(tangent_vec, 1.0, base_point)

    def step(self, direction, coefficient, base_point):
        """Exp_P(c V) with V projected at P (``Geodesics.step``), kept on the space."""
        if base_point.ndim > 1 or direction.ndim > 1:
            return super().exp(coefficient * direction, base_point)
        along = float(direction.dot(base_point))
        base_sq = float(base_point.dot(base_point))
        direction_sq = float(direction.dot(direction))
        projection = along / base_sq
        # |V - p P|^2 = |V|^2 - p <V, P>; <V, P> is rounding for a tangent V
        sq_norm = coefficient**2 * max(direction_sq - projection * along, 0.0)
        coef_1, coef_2 = _even_coefficients(sq_norm, utils.cos_close_0, utils.sinc_close_0, 4,
                                            math.cos, math.sin)
        coef_2 *= coefficient
        coef_1 -= coef_2 * projection
        point = add_scaled(base_point * coef_1, coef_2, direction)
        if self.space is None:
            return point
        # |coef_1 P + coef_2 V|^2 from the dot products above, to rounding
        squared = (coef_1 * coef_1 * base_sq + 2 * coef_1 * coef_2 * along
                   + coef_2 * coef_2 * direction_sq)
        return onto_sphere(point, squared)


def sphere_log(points, base_point):
    """Log_P(Z) = theta / sin(theta) Z - theta / tan(theta) P, theta = arccos <P, Z>, for
    finite points [..., d+1] at one base point [d+1]: geomstats' ``HypersphereMetric.log``
    in plain array code. Its Taylor expansions near theta = 0 agree with the closed form
    to rounding wherever arccos returns theta > 0 (then theta > 1e-8); theta = 0 gives the
    limits 1 and 1. No branch on the data."""
    if points.ndim == 2 and points.shape[0] == 1:  # one record: scalar arithmetic
        angle = math.acos(min(1.0, max(-1.0, float(points[0] @ base_point))))
        if angle == 0:
            return points - base_point
        return (angle / math.sin(angle)) * points - (angle / math.tan(angle)) * base_point
    cosine = gs.clip(points @ base_point, -1.0, 1.0)
    angle = gs.arccos(cosine)
    positive = angle > 0
    ones = gs.ones_like(angle)
    safe = gs.where(positive, angle, ones)
    coef_1 = gs.where(positive, safe / gs.sin(safe), ones)
    coef_2 = gs.where(positive, safe / gs.tan(safe), ones)
    return coef_1[..., None] * points - coef_2[..., None] * base_point


def log_for(space):
    """``log(points, base_point)`` of ``space``'s metric: ``sphere_log`` on a sphere
    with geomstats' metric and one base point, else the metric's own."""
    if type(space.metric) is not HypersphereMetric:
        return space.metric.log

    def log(points, base_point):
        if base_point.ndim > 1:
            return space.metric.log(points, base_point)
        return sphere_log(points, base_point)

    return log


class EuclideanGeodesics(Geodesics):
    """Exp_P(V) = P + V."""

    def exp(self, tangent_vec, base_point):
        """P + V."""
        return base_point + tangent_vec

    def step(self, direction, coefficient, base_point):
        """P + c V."""
        return add_scaled(base_point, coefficient, direction)


def _even_coefficients(sq_norm, close_0_even, close_0_odd, order, even, odd):
    """(even(|V|), odd(|V|) / |V|), floats, from sq_norm = |V|^2 (a float or 0-d array):
    in closed form (``even`` and ``odd`` on floats), or geomstats' Taylor expansions of
    ``order`` (``algebra_utils``) where |V|^2 is below their threshold ``utils.EPSILON``."""
    squared = float(sq_norm)
    if squared < utils.EPSILON:
        return (float(utils.taylor_exp_even_func(squared, close_0_even, order=order)),
                float(utils.taylor_exp_even_func(squared, close_0_odd, order=order)))
    norm = math.sqrt(squared)
    return even(norm), odd(norm) / norm


HYPERBOLOID_MAX_STEP = 300.0  # |V| kept by the hyperboloid's exp: e^(2 (300 + R)) is finite


class HyperboloidGeodesics(Geodesics):
    """geomstats' hyperbolic maps, with an ``exp`` that keeps its points in float64 (see
    the module docstring)."""

    def exp(self, tangent_vec, base_point):
        """cosh|V| P + sinh|V| / |V| V, kept on the space (``onto_space``)."""
        if base_point.ndim > 1 or tangent_vec.ndim > 1:
            return super().exp(tangent_vec, base_point)
        sq_norm = gs.clip(self.space.embedding_space.metric.squared_norm(tangent_vec), 0,
                          math.inf)
        if float(sq_norm) > HYPERBOLOID_MAX_STEP**2:
            tangent_vec = tangent_vec * (HYPERBOLOID_MAX_STEP / gs.sqrt(sq_norm))
            sq_norm = gs.clip(self.space.embedding_space.metric.squared_norm(tangent_vec),
                              0, math.inf)
        coef_1, coef_2 = _even_coefficients(sq_norm, utils.cosh_close_0, utils.sinch_close_0,
                                            5, math.cosh, math.sinh)
        point = coef_1 * base_point + coef_2 * tangent_vec
        if float(point[0]) <= math.cosh(HYPERBOLOID_RADIUS) and \
                minkowski_squared_norm(point) < 0:
            point = self.space.regularize(point)
        return onto_space(self.space, point)


def product_2x2(left, right):
    """The product of two 2x2 matrices given as nested sequences of floats (tuples out)."""
    (a, b), (c, d) = left
    (e, f), (g, h) = right
    return ((a * e + b * g, a * f + b * h), (c * e + d * g, c * f + d * h))


def transpose_2x2(matrix):
    """The transpose of a 2x2 matrix given as nested sequences of floats (tuples out)."""
    (a, b), (c, d) = matrix
    return ((a, c), (b, d))


def whitened_spectrum_2x2(matrix, inverse):
    """M = F^-1 V F^-T and ``spectrum_2x2`` of its lower triangle: (M, low, high, mean,
    gap), nested tuples [2, 2] and floats."""
    whitened = product_2x2(product_2x2(inverse, matrix), transpose_2x2(inverse))
    (first, _), (off, second) = whitened
    return (whitened,) + spectrum_2x2(first, second, off)


def function_2x2(whitened, mean, gap, f_low, f_high):
    """f(M) = alpha I + beta M from f at the eigenvalues (lower triangle of M read)."""
    (first, _), (off, second) = whitened
    alpha, beta = function_coefficients(f_low, f_high, mean, gap)
    return ((alpha + beta * first, beta * off), (beta * off, alpha + beta * second))


def factor_map_2x2(whitened, mean, gap, half_low, half_high, factor, inverse):
    """(G G^T, G, G^-1), G = F h(M), G^-1 = (1/h)(M) F^-1, from h at the eigenvalues of
    M (``whitened_spectrum_2x2``); nested tuples [2, 2]. A G G^T that rounding left
    indefinite is floored (``onto_space.floor_spectrum_2x2``), with its factors."""
    new_factor = product_2x2(factor, function_2x2(whitened, mean, gap, half_low, half_high))
    new_inverse = product_2x2(
        function_2x2(whitened, mean, gap, 1 / half_low, 1 / half_high), inverse)
    point = product_2x2(new_factor, transpose_2x2(new_factor))
    floored = floor_spectrum_2x2(point)  # rounding left SPD: kept on it (``onto_space``)
    if floored is None:
        return point, new_factor, new_inverse
    return floored


def _map_2x2(matrix, factor, inverse, half_power):
    """(G G^T, G, G^-1), G = F h(M), G^-1 = (1/h)(M) F^-1, M = F^-1 V F^-T: the SPD(2)
    maps in Python floats (nested sequences [2, 2]; 2x2 array operations cost a
    microsecond each), h in closed form (``symmetric_2x2``). The helpers are plain
    arithmetic, which ``optim.compiled_blocks`` also compiles."""
    whitened, low, high, mean, gap = whitened_spectrum_2x2(matrix, inverse)
    return factor_map_2x2(whitened, mean, gap, float(half_power(low)),
                          float(half_power(high)), factor, inverse)


def geodesics_for(space):
    """The closed-form geodesics of ``space``'s metric if known, else geomstats' own."""
    metric, _ = unwrap_metric(space.metric)
    if type(metric) is SPDAffineMetric:
        return SPDAffineGeodesics(space.metric, space)
    if type(metric) is HyperboloidMetric:
        return HyperboloidGeodesics(space.metric, space)
    if type(space.metric) is HypersphereMetric:
        return SphereGeodesics(space.metric, space)
    if type(space) is Euclidean and isinstance(space.metric, EuclideanMetric):
        return EuclideanGeodesics(space.metric, space)
    return Geodesics(space.metric, space)
