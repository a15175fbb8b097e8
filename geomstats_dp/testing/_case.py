"""The ``Case`` every conformance check takes, and the small public data and references
the built-in cases share (``_cases``, ``_manifold_cases``)."""

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.optim import canonical_point
from geomstats_dp.testing._neighbours import adjacency, replaced_records

N_SAMPLES = 40
SEED = 0
SAMPLED_RECORDS = (0, 1, 2, 3)
CHEAP_SPACES = {"sphere": lambda: Hypersphere(2), "spd": lambda: SPDMatrices(2),
                "hyperboloid": lambda: Hyperboloid(2)}


@dataclass
class Case:
    """One estimator (unfitted), its data and what its release converges to.

    Parameters
    ----------
    name : str
        Names the estimator, its method and its space (pytest ids).
    estimator : estimator
        Unfitted template; the checks clone it.
    X, y : array-like
        Small public data on the active backend.
    reference : callable or None
        ``reference(X, y) -> answer``: the non-private answer the release approaches at a
        huge epsilon (None: no convergence check).
    distance : callable or None
        ``distance(release, answer) -> float``; None: the largest absolute difference.
    tolerance : float
        Largest ``distance`` accepted at epsilon 1e6.
    predict : array-like or None
        Features to predict on after the fit, for an estimator that releases there
        (structured prediction per row).
    expected_failures : dict
        Check name -> reason: a known failure (a finding of an open issue).
    skipped : dict
        Check name -> reason: a check not run on this case (covered elsewhere at a
        cheaper size).
    slow : bool
        Every check of this case is marked slow in the suite.
    sampled : bool
        ``check_touched_stages`` replaces only the records ``SAMPLED_RECORDS`` (one fit
        each): enough where every record reaches the same stages (full batches); False
        for a search's split or a federation, where every record is replaced.
    """

    name: str
    estimator: Any
    X: Any
    y: Any = None
    reference: Callable | None = None
    distance: Callable | None = None
    tolerance: float = 1e-2
    predict: Any = None
    expected_failures: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    slow: bool = False
    sampled: bool = True

    @property
    def options(self):
        """Check name -> keyword arguments given to that check."""
        if not self.sampled:
            return {}
        neighbours = list(replaced_records(self.X, self.y, SAMPLED_RECORDS))
        if adjacency(self.estimator) == "label_level":  # the features are public
            neighbours = [(name, self.X, y2) for name, _, y2 in neighbours]
        return {"check_touched_stages": {"neighbours": neighbours}}


def _cloud(space, n_samples, radius, seed, offset=0.6):
    """Points at distance at most ``radius`` of a centre at distance ``offset`` from the
    canonical point (the public start)."""
    start = canonical_point(space)
    direction = TangentGaussian(space).sample(start, sigma=1.0, random_state=seed)
    direction = direction * offset / space.metric.norm(direction, start)
    center = space.metric.exp(direction, start)
    spread = TangentGaussian(space).sample(center, n_samples=n_samples,
                                           sigma=radius / (2 * math.sqrt(space.dim)),
                                           random_state=seed + 1)
    norms = to_numpy(space.metric.norm(spread, center))
    factors = np.minimum(1.0, radius / norms).reshape((-1,) + (1,) * len(space.shape))
    return space.metric.exp(spread * to_backend(factors), center)


def frechet_mean_reference(space):
    """geomstats' non-private Frechet mean of X (the reference of every mean case)."""

    def reference(X, y=None):
        return FrechetMean(space).fit(X).estimate_

    return reference


def riemannian_distance(space):
    """The space's geodesic distance between a release and the reference."""

    def distance(release, answer):
        return float(space.metric.dist(to_backend(release), to_backend(answer)))

    return distance


def subspace_distance(release, answer):
    """The sine of the largest principal angle between two row spaces (PCA)."""
    a = np.linalg.qr(np.atleast_2d(to_numpy(release)).T)[0]
    b = np.linalg.qr(np.atleast_2d(to_numpy(answer)).T)[0]
    return float(np.linalg.norm(a - b @ (b.T @ a), 2))
