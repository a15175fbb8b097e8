"""At a huge epsilon the release approaches the non-private answer."""

import numpy as np
from sklearn.base import clone

from geomstats_dp._backend import to_numpy
from geomstats_dp.privacy import PrivacyBudget
from geomstats_dp.testing._observables import fit_data

HUGE_EPSILON = 1e6
RELEASES = ("estimate_", "components_", "cluster_centers_", "centroids_", "coef_",
            "base_point_")


def release_of(estimator):
    """The fitted estimator's main release (the first of ``RELEASES`` it has)."""
    for name in RELEASES:
        if hasattr(estimator, name):
            return getattr(estimator, name)
    raise AssertionError(f"{type(estimator).__name__} has none of the releases {RELEASES}")


def _largest_difference(release, answer):
    return float(np.max(np.abs(np.asarray(to_numpy(release)) - np.asarray(to_numpy(answer)))))


def check_convergence(estimator, X, y=None, *, reference, distance=None, tolerance=1e-2,
                      epsilon=HUGE_EPSILON, random_state=0):
    """At epsilon 1e6, with the estimator's other settings, the release is within
    ``tolerance`` of the non-private answer.

    Property: the noise vanishes as epsilon grows, and what remains (clipping, a finite
    number of steps) is the estimator's bias at its defaults, which must be small on
    data inside its bounds: ``distance(release, reference(X, y)) <= tolerance``.

    Parameters
    ----------
    estimator : estimator
        Unfitted template; a clone is fitted with ``epsilon`` (its budget one of that
        size).
    X, y : array-like
        Data inside the estimator's public bounds.
    reference : callable
        ``reference(X, y) -> answer``: the non-private answer (geomstats' FrechetMean,
        scikit-learn's PCA, ...).
    distance : callable, optional
        ``distance(release, answer) -> float``; default the largest absolute difference.
    tolerance : float
    epsilon : float
    random_state : int

    Raises
    ------
    AssertionError
        With the distance found.
    """
    fitted = clone(estimator)
    delta = getattr(fitted, "delta", None) or 1e-5
    fitted.set_params(epsilon=epsilon, budget=PrivacyBudget(epsilon, delta),
                      random_state=random_state)
    fit_data(fitted, X, y)
    found = (distance or _largest_difference)(release_of(fitted), reference(X, y))
    if not found <= tolerance:
        raise AssertionError(f"check_convergence: at epsilon {epsilon:g} the release is "
                             f"{found:.3g} from the non-private answer (tolerance "
                             f"{tolerance:g})")
