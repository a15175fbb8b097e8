"""Exact rejection sampling of a log-concave density on an interval.

The envelope is the upper hull of at most three tangent lines of the log-density: at the
mode and at the points on either side where the log-density has dropped by one. A concave
function lies below each of its tangents, so the piecewise-exponential envelope dominates
the density and rejection from it is exact; with these tangent points the acceptance rate
stays above one half in practice, whatever the scale of the density.
"""

import math

import numpy as np
from geomstats_dp.distributions.laplace.rejection import rejection_sample


def _log_segment_mass(slope, width):
    """log of the integral of exp(slope * s) for s in [0, width], stably for any slope."""
    scaled = slope * width
    if scaled == 0.0:
        return math.log(width)
    if scaled > 0:
        return scaled + math.log(-math.expm1(-scaled) / slope)
    return math.log(math.expm1(scaled) / slope)


def _truncated_exponential(slope, low, high, uniforms):
    """Inverse transform of the density ~ exp(slope * x) on [low, high]."""
    width = high - low
    if slope * width == 0.0:
        return low + uniforms * width
    if slope > 0:
        return high + np.log1p(uniforms * np.expm1(-slope * width)) / slope
    return low + np.log1p(uniforms * np.expm1(slope * width)) / slope


def _bisect_level(log_density, level, inside, outside, n_steps=80):
    """Point between ``inside`` (h >= level) and ``outside`` (h < level) where h = level.

    Plain bisection: h may be -inf at ``outside``, which derivative-based root finders
    do not tolerate.
    """
    for _ in range(n_steps):
        middle = 0.5 * (inside + outside)
        if float(log_density(np.array(middle))) >= level:
            inside = middle
        else:
            outside = middle
    return 0.5 * (inside + outside)


class LogConcaveSampler:
    """Draws from a density proportional to exp(h(x)) on [lower, upper], h concave.

    Parameters
    ----------
    log_density : callable
        h, vectorised over numpy arrays; may return -inf at the ends of the interval.
    derivative : callable
        h', finite at the interior points where it is evaluated.
    mode : float
        A maximiser of h on [lower, upper].
    lower, upper : float
        Finite ends of the support.
    """

    def __init__(self, log_density, derivative, mode, lower, upper):
        if not lower <= mode <= upper < math.inf:
            raise ValueError(
                f"need lower <= mode <= upper < inf, got {lower}, {mode}, {upper}"
            )
        self.log_density = log_density
        self.lower, self.upper = float(lower), float(upper)
        points, values, slopes = [], [], []
        for point in self._tangent_points(log_density, float(mode)):
            slope = 0.0 if point == mode and lower < mode < upper else float(derivative(point))
            if slopes and math.isclose(slope, slopes[-1], rel_tol=1e-12, abs_tol=1e-300):
                continue  # h is linear there: the previous tangent is the same line
            points.append(point)
            values.append(float(log_density(np.array(point))))
            slopes.append(slope)
        values, slopes = np.array(values), np.array(slopes)
        breaks = [self.lower]
        for k in range(len(points) - 1):
            breaks.append(
                (values[k + 1] - values[k] - points[k + 1] * slopes[k + 1] + points[k] * slopes[k])
                / (slopes[k] - slopes[k + 1])
            )
        breaks.append(self.upper)
        self._points, self._values, self._slopes = np.array(points), values, slopes
        self._breaks = np.clip(np.array(breaks), self.lower, self.upper)
        log_masses = np.array(
            [
                values[k] + slopes[k] * (self._breaks[k] - points[k])
                + _log_segment_mass(slopes[k], self._breaks[k + 1] - self._breaks[k])
                if self._breaks[k + 1] > self._breaks[k]
                else -math.inf
                for k in range(len(points))
            ]
        )
        weights = np.exp(log_masses - log_masses.max())
        self._segment_probs = weights / weights.sum()

    def _tangent_points(self, log_density, mode):
        """Mode plus the points where h = h(mode) - 1 on each side, when they exist."""
        level = float(log_density(np.array(mode))) - 1.0
        points = []
        for end in (self.lower, self.upper):
            if end != mode and float(log_density(np.array(end))) < level:
                points.append(_bisect_level(log_density, level, mode, end))
        below = [p for p in points if p < mode]
        above = [p for p in points if p > mode]
        return below + [mode] + above

    def _envelope(self, x, segments):
        """Log of the envelope at x (x in its segment)."""
        return self._values[segments] + self._slopes[segments] * (x - self._points[segments])

    def _propose(self, size, rng):
        cumulative = np.cumsum(self._segment_probs)
        segments = np.minimum(
            np.searchsorted(cumulative, rng.random(size), side="right"), len(cumulative) - 1
        )
        x = np.empty(size)
        uniforms = rng.random(size)
        for k in range(len(self._segment_probs)):
            chosen = segments == k
            if chosen.any():
                x[chosen] = _truncated_exponential(
                    self._slopes[k], self._breaks[k], self._breaks[k + 1], uniforms[chosen]
                )
        x = np.clip(x, self.lower, self.upper)
        log_ratio = self.log_density(x) - self._envelope(x, segments)
        keep = np.log(rng.random(size)) < log_ratio
        return x, keep

    def sample(self, size, rng):
        """Draw ``size`` exact samples, numpy array of shape [size]."""
        return rejection_sample(self._propose, size, rng, what="log-concave envelope")
