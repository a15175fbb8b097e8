"""A private multinomial logistic regression by objective perturbation.

Chaudhuri, Monteleoni & Sarwate (2011), with Gaussian noise as Kifer, Smith & Thakurta
(2012). On rows x_i of norm at most 1 (clipped again), x~_i = (x_i, 1), the released
theta in R^{K x (p + 1)} (coefficients and intercepts) is the exact minimiser of

    J(theta) = sum_i CE(theta x~_i, y_i) + Lambda / 2 ||theta||_F^2 + <b, theta>,
    b ~ N(0, sigma^2 I),  Lambda = max(n lambda, Lambda_min),

computed by Nesterov's accelerated gradient descent for strongly convex functions
(step 1 / L_J, L_J = n beta + Lambda; condition number kappa = L_J / Lambda) with a
public number of steps (``solver_steps``): in exact arithmetic J(theta_T) - J* <=
2 (1 - kappa^-1/2)^T (J(0) - J*) (Nesterov 2004, Theorem 2.2.3) and J(0) - J* <=
||grad J(0)||^2 / (2 Lambda), with ||grad J(0)|| <= n sqrt(2) + ||b|| and ||b|| below
sigma times the square root of its chi-square (1 - ``NORM_DELTA_SHARE`` delta) quantile;
T is the least number of steps that then puts theta_T within ``SOLVER_ERROR`` of the
exact minimiser. The run time depends on public quantities only. Lambda is at least
n beta / (``MAX_CONDITION`` - 1), so that T stays moderate whatever lambda. The
intercepts are penalised too: J must be strongly convex in every coordinate.

The guarantee below is the exact minimiser's; the released theta_T differs from it by at
most ``SOLVER_ERROR`` (plus floating-point rounding) except when ||b|| exceeds its
quantile, whose probability is charged in delta. Iyengar, Near, Song, Thakkar, Thakurta
& Wang (2019) add output noise to cover an approximate minimiser exactly; this module
does not, and its noise is not floating-point safe.

Conditions (the per-record loss l(theta) = CE(theta x~, y)): convex and twice
continuously differentiable; gradient (softmax(theta x~) - e_y) x~^T of Frobenius norm at
most zeta = ||softmax - e_y|| ||x~|| <= sqrt(2) sqrt(2) = 2; Hessian
(diag(p) - p p^T) (x) x~ x~^T of eigenvalues at most beta = 1/2 ||x~||^2 <= 1 and rank at
most r = K - 1.

Privacy. Adjacency: replace-one on whole records (row and label). The output theta
determines b = -(grad L_D(theta) + Lambda theta), so its density is the Gaussian density
of b times |det(H_D(theta) + Lambda I)|. Between neighbours D, D':
- the determinants differ by the Hessians of one record (PSD, rank <= r, norm <= beta)
  over a matrix >= Lambda I: their ratio lies in [(1 + beta/Lambda)^-r, (1 + beta/Lambda)^r],
  epsilon_J = r log(1 + beta / Lambda) <= ``JACOBIAN_SHARE`` epsilon (Lambda_min makes it so);
- b moves by Delta(theta) = grad l(theta; z) - grad l(theta; z'), ||Delta|| <= 2 zeta,
  inside the fixed subspace {u x~^T + v x~'^T: u, v orthogonal to 1} of dimension
  m = 2 (K - 1). The Gaussian log-ratio is (2 <b, Delta> + ||Delta||^2) / (2 sigma^2)
  <= (2 zeta ||P b|| + 2 zeta^2) / sigma^2, and ||P b||^2 / sigma^2 is chi-square with m
  degrees of freedom, below t^2 = its 1 - delta quantile with probability 1 - delta:
  the loss is at most epsilon_G = 2 zeta t / sigma + 2 zeta^2 / sigma^2 there.
Hence the privacy loss exceeds epsilon = epsilon_J + epsilon_G with probability at most
(1 - ``NORM_DELTA_SHARE``) delta, and the solver's bound fails with probability at most
``NORM_DELTA_SHARE`` delta: (epsilon, delta)-DP. Accountant: the guarantee as one ``ApproxDPEvent`` (composed
with the rest of a fit by the package's basic or advanced composition); sigma solves the
quadratic above at epsilon_G = epsilon - epsilon_J, before any data value is read.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import softmax
from scipy.stats import chi2

from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.learning.mechanisms.logistic import design
from geomstats_dp.privacy import ApproxDPEvent
from geomstats_dp.privacy.stages import noisy_stage

LIPSCHITZ = 2.0  # zeta: the per-record gradient's norm bound (module notes)
SMOOTHNESS = 1.0  # beta: the per-record Hessian's eigenvalue bound
JACOBIAN_SHARE = 0.5  # the largest share of epsilon the Jacobian may take
SOLVER_ERROR = 1e-12  # the public bound on ||theta_T - theta*|| the steps guarantee
MAX_CONDITION = 1e5  # kappa at most: Lambda >= n beta / (MAX_CONDITION - 1)
NORM_DELTA_SHARE = 0.1  # the share of delta for ||b|| above its quantile


def solver_steps(n_samples, penalty, noise_norm):
    """The public number of accelerated gradient steps (module notes).

    Parameters
    ----------
    n_samples : int
    penalty : float
        Lambda.
    noise_norm : float
        The public bound on ||b||.

    Returns
    -------
    steps : int
        The least T with 4 e^(-T / sqrt(kappa)) (J(0) - J*) / Lambda <= SOLVER_ERROR^2
        for J(0) - J* <= (n sqrt(2) + noise_norm)^2 / (2 Lambda).
    """
    kappa = (n_samples * SMOOTHNESS + penalty) / penalty
    gradient = n_samples * math.sqrt(2.0) + noise_norm
    ratio = 2.0 * gradient**2 / (penalty * SOLVER_ERROR) ** 2
    return max(1, math.ceil(math.sqrt(kappa) * math.log(ratio)))


def objective_perturbation_plan(n_samples, n_classes, epsilon, delta, regularization):
    """(Lambda, sigma, epsilon_J) of a release at (epsilon, delta) from public quantities.

    Parameters
    ----------
    n_samples, n_classes : int
    epsilon, delta : float
    regularization : float
        lambda >= 0, the penalty per record (Lambda = n lambda at least).

    Returns
    -------
    penalty : float
        Lambda.
    sigma : float
        The standard deviation of each coordinate of b.
    jacobian_epsilon : float
        epsilon_J = r log(1 + beta / Lambda).
    """
    rank = n_classes - 1
    # capped exponent: a larger Lambda_min only lowers epsilon_J (no overflow at huge eps)
    minimum = max(SMOOTHNESS / math.expm1(min(JACOBIAN_SHARE * epsilon / rank, 700.0)),
                  n_samples * SMOOTHNESS / (MAX_CONDITION - 1))
    penalty = max(n_samples * regularization, minimum)
    jacobian = rank * math.log1p(SMOOTHNESS / penalty)
    gaussian = epsilon - jacobian
    t = math.sqrt(chi2.isf((1 - NORM_DELTA_SHARE) * delta, 2 * rank))
    ratio = (math.sqrt(t * t + 2 * gaussian) - t) / 2  # u = zeta / sigma
    return penalty, LIPSCHITZ / ratio, jacobian


@dataclass(frozen=True)
class LogisticObjectiveRelease(Mechanism):
    """Objective perturbation of a multinomial logistic model (module notes).

    Parameters
    ----------
    n_samples, n_classes, n_features : int
        The public n, K and p.
    regularization : float
        lambda >= 0.
    epsilon, delta : float
        The release's guarantee.
    label : str
        Prefix of the ledger event.
    """

    n_samples: int
    n_classes: int
    n_features: int
    regularization: float
    epsilon: float
    delta: float
    label: str = "logistic"

    def _plan(self):
        return objective_perturbation_plan(self.n_samples, self.n_classes, self.epsilon,
                                           self.delta, self.regularization)

    def events(self):
        return (ApproxDPEvent(self.epsilon, self.delta,
                              label=f"{self.label}: objective perturbation"),)

    def release(self, data, weights, rng):
        """Fit on ``data = (rows, codes)``, the rows clipped to norm 1 (again);
        returns ``coef_``, shape=[n_classes, n_features], and ``intercept_``."""
        inputs, targets = design(*data, self.n_classes)
        penalty, sigma, _ = self._plan()
        shape = (self.n_classes, self.n_features + 1)
        size = shape[0] * shape[1]
        linear = np.asarray(noisy_stage(
            np.zeros(size), rng.normal(0.0, sigma, size),
            label=f"{self.label}: objective perturbation", law="gaussian", scale=sigma,
            sensitivity=2 * LIPSCHITZ, dim=size), dtype=float)

        noise_norm = sigma * math.sqrt(chi2.isf(NORM_DELTA_SHARE * self.delta, size))
        steps = solver_steps(self.n_samples, penalty, noise_norm)
        theta = _minimise(inputs, targets, penalty, linear.reshape(shape), steps)
        return {"coef_": theta[:, :-1], "intercept_": theta[:, -1],
                "noise_multiplier_": sigma / (2 * LIPSCHITZ), "n_iter_": steps}


def _minimise(inputs, targets, penalty, linear, steps):
    """Nesterov's accelerated gradient descent on J (module notes), ``steps`` steps."""
    smoothness = len(inputs) * SMOOTHNESS + penalty
    root = math.sqrt(smoothness / penalty)
    momentum = (root - 1) / (root + 1)
    theta = ahead = np.zeros_like(linear)
    for _ in range(steps):
        residuals = softmax(inputs @ ahead.T, axis=1) - targets
        gradient = residuals.T @ inputs + penalty * ahead + linear
        updated = ahead - gradient / smoothness
        ahead = updated + momentum * (updated - theta)
        theta = updated
    return theta
