"""Non-private reference solutions, converged and checked, for utility measurements."""

import geomstats.backend as gs
import numpy as np
from geomstats.learning.frechet_mean import FrechetMean

from geomstats_dp._backend import to_numpy


def exact_frechet_mean(space, points, weights=None, gradient_tol=1e-10, max_iter=1000):
    """The Frechet mean by geomstats' gradient descent, run to a small gradient norm.

    geomstats' defaults (32 iterations, tolerance 1e-4 on the squared step) stop early on
    spread-out data; this runs until the Riemannian gradient norm is below
    ``gradient_tol`` and raises if it is not reached. Not private: the data are read
    freely. Used for excess-risk measurements and by the Laplace mechanism.

    Parameters
    ----------
    space : Manifold
    points : array-like, shape=[n, *space.shape]
    weights : array-like, shape=[n], optional
    gradient_tol : float
    max_iter : int

    Returns
    -------
    mean : array-like, shape=[*space.shape]
    """
    estimator = FrechetMean(space)
    if hasattr(estimator, "optimizer"):  # flat spaces get a closed-form LinearMean
        estimator.optimizer.max_iter = max_iter
        estimator.optimizer.epsilon = gradient_tol**2
        estimator.optimizer.init_step_size = 0.5
    mean = estimator.fit(points, weights=weights).estimate_
    if weights is None:
        weights = gs.ones(points.shape[0]) / points.shape[0]
    gradient = gs.einsum("n,n...->...", weights / gs.sum(weights), space.metric.log(points, mean))
    norm = float(to_numpy(space.metric.norm(gradient, mean)))
    if not np.isfinite(norm) or norm > gradient_tol * 100:
        raise RuntimeError(
            f"the Frechet mean solver did not converge: gradient norm {norm:.3g} after "
            f"{max_iter} iterations"
        )
    return mean
