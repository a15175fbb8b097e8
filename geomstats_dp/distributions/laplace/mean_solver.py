"""The Frechet mean to a public tolerance in a public number of iterations.

The Laplace release (Reimherr et al., 2021) is centred at the Frechet mean x* of the data,
all in the public ball B_r(m0). A solver that stops on a data-dependent criterion, or raises
when it does not converge, makes its iteration count or its failure observable. This one
runs Riemannian gradient descent on F(x) = (1 / 2n) sum_i d(x, x_i)^2 (``optim.karcher``),

    x_0 = m0,   x_(k+1) = Exp_(x_k)(eta (1/n) sum_i Log_(x_k)(x_i)),

for K iterations, eta and K computed from public quantities (r, the curvature bounds
(``ball_geometry``) and the tolerance tol) so that d(x_K, x*) <= tol. Replacing one record
moves x* by at most Delta (Theorem 2 of Reimherr et al.), so the two x_K lie within
Delta + 2 tol of each other: the sensitivity of the release (``released_mean_sensitivity``).

Hessian comparison (Karcher 1977; Zhang and Sra 2016, Lemma 5): where every record lies
within rho of x, mu(rho) <= Hess F(x) <= L(rho) with mu = rho sqrt(k) cot(rho sqrt(k)) for
k = kappa_max > 0 (1 if kappa_max <= 0) and L = rho s coth(rho s) for s^2 = -kappa_min > 0
(1 if kappa_min >= 0). Below, rho = 3r: an iterate stays within 2r of m0, the records
within r of it.

- kappa_min >= 0 (flat spaces, the sphere; Bures-Wasserstein, the Wasserstein space of
  Gaussians, of non-negative curvature, Ambrosio, Gigli and Savare 2008, Theorem 7.3.2),
  eta = 1. Let d_k = d(x_k, x*) (d_0 < r); the records lie within rho of the geodesic from
  x_k to x*, where F is mu-strongly convex: <g, Log_(x_k) x*> <= F* - F(x_k) - mu d_k^2 / 2
  (g = grad F(x_k)). F is 1-smooth (d^2 / 2 is 1-semiconcave under curvature >= 0):
  |g|^2 <= 2 (F(x_k) - F*). Toponogov's comparison (curvature >= 0; Zhang and Sra 2016,
  Lemma 5 with zeta = 1) in the triangle
  (x_k, x_(k+1), x*): d_(k+1)^2 <= d_k^2 + |g|^2 + 2 <g, Log_(x_k) x*> <= (1 - mu) d_k^2.
  Needs 4r < inj (the ball B_2r(m0) is convex) and 3r < pi / (2 sqrt(kappa_max)).
- kappa_max <= 0 < -kappa_min (hyperbolic space, SPD affine-invariant: Hadamard
  manifolds, mu = 1 everywhere), eta = 1 / L(3r). On the boundary of B_2r(m0),
  F - F* >= d(x, x*)^2 / 2 > r^2 / 2 > F(m0) - F*, so no sublevel set below F(m0) reaches it.
  Along a step's geodesic inside B_2r(m0), F(Exp_x(-t g)) <= F(x) - t (1 - L t / 2) |g|^2
  <= F(x) for t <= 1 / L, so (by continuity) every step stays in B_2r(m0) and
  F(x_(k+1)) - F* <= F(x_k) - F* - |g|^2 / (2L) <= (1 - 1/L) (F(x_k) - F*)
  (|g|^2 >= 2 (F - F*) by strong convexity); d_K^2 <= 2 (F(x_K) - F*) <= (1 - 1/L)^K r^2.

Either way d_K^2 <= c^K r^2 with a public contraction c: K = ceil(log(tol^2 / r^2) / log c)
(K = 1 when c = 0: on flat spaces one step is the closed-form mean). A geometry outside both
cases, or a radius outside their conditions, is refused (ValueError) before any data is
read. The bound is for exact arithmetic; rounding adds about 1e-15 per step, far below tol.
"""

import math
from dataclasses import dataclass

import geomstats.backend as gs

from geomstats_dp.distributions.laplace.sensitivity import (
    ball_geometry,
    curvature_correction,
    frechet_mean_sensitivity,
)
from geomstats_dp.optim.karcher import karcher_mean

TOL_FRACTION = 1e-4  # tol = TOL_FRACTION x Delta: the sensitivity grows by 0.02%


@dataclass(frozen=True)
class MeanSolver:
    """Public settings of the fixed-iteration Frechet mean solver (module doc).

    Attributes
    ----------
    n_iter : int
        K, the number of gradient steps.
    step_size : float
        eta.
    tol : float
        The proven bound on the geodesic distance of x_K to the Frechet mean.
    """

    n_iter: int
    step_size: float
    tol: float

    def solve(self, space, points, center):
        """x_K: K gradient steps on the Frechet function from the public ``center``.

        Parameters
        ----------
        space : Manifold
        points : array-like, shape=[n_samples, *space.shape]
            Records in the public ball B_r(center).
        center : array-like, shape=[*space.shape]

        Returns
        -------
        mean : array-like, shape=[*space.shape]
            Within ``tol`` of the Frechet mean of ``points``.
        """
        n_samples = int(points.shape[0])
        return karcher_mean(space, points, gs.ones(n_samples) / n_samples, center,
                            n_iter=self.n_iter, step_size=self.step_size)


def _refuse(space, radius, why):
    return ValueError(
        f"the Frechet mean on {type(space).__name__} with radius {radius} has no proven "
        f"fixed-iteration solver ({why}); method='laplace' needs one (a solver stopping on "
        "the data would make its run observable)"
    )


def plan_mean_solver(space, radius, tol, center=None):
    """The public step size and number of iterations reaching ``tol`` (module doc).

    Parameters
    ----------
    space : Manifold
    radius : float
        r: the records lie in the open ball B_r(center).
    tol : float
        The distance to the Frechet mean to reach, > 0.
    center : array-like, shape=[*space.shape], optional
        Needed where the curvature is bounded only on balls (Bures-Wasserstein).

    Returns
    -------
    solver : MeanSolver

    Raises
    ------
    ValueError
        Curvature of both signs, or a radius outside the proof's conditions.
    """
    kappa_min, kappa_max, injectivity = ball_geometry(space, center, 2 * radius)
    reach = 3 * radius  # from a point within 2r of the center to a record
    if kappa_min >= 0:
        if not 4 * radius < injectivity:
            raise _refuse(space, radius, f"4 r must be below the injectivity radius "
                                         f"{injectivity:.6g}")
        if kappa_max > 0 and not reach * math.sqrt(kappa_max) < math.pi / 2:
            raise _refuse(space, radius, f"3 r must be below pi / (2 sqrt(kappa_max)) = "
                                         f"{math.pi / (2 * math.sqrt(kappa_max)):.6g}")
        step_size = 1.0
        contraction = 1.0 - curvature_correction(reach / 2, kappa_max)
    elif kappa_max <= 0:
        angle = reach * math.sqrt(-kappa_min)
        step_size = math.tanh(angle) / angle  # 1 / L(3r)
        contraction = 1.0 - step_size
    else:
        raise _refuse(space, radius, "its curvature takes both signs")
    n_iter = 1
    if contraction > 0:
        n_iter = max(1, math.ceil(2 * math.log(tol / radius) / math.log(contraction)))
    return MeanSolver(n_iter, step_size, tol)


def released_mean_sensitivity(space, radius, n_samples, center=None):
    """Sensitivity of the fixed-iteration mean, and its solver: Delta + 2 tol.

    ``space``, ``radius`` and ``center`` as in ``plan_mean_solver``; ``n_samples`` the
    public number of records n.

    Returns
    -------
    sensitivity : float
        Delta (1 + 2 TOL_FRACTION), Delta = ``frechet_mean_sensitivity``.
    solver : MeanSolver
        With tol = TOL_FRACTION Delta.
    """
    sensitivity = frechet_mean_sensitivity(space, radius, n_samples, center)
    solver = plan_mean_solver(space, radius, TOL_FRACTION * sensitivity, center)
    return sensitivity + 2 * solver.tol, solver
