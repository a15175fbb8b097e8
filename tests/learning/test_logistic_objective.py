"""LogisticObjectiveRelease (objective perturbation): its privacy loss on neighbours,
computed independently from the output's density, exceeds epsilon with probability at
most delta; at a huge epsilon it is scikit-learn's penalised logistic regression."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from sklearn.linear_model import LogisticRegression

from geomstats_dp.learning.mechanisms.logistic_objective import (
    LogisticObjectiveRelease,
    objective_perturbation_plan,
)
from tests.conftest import shifted

N_SAMPLES, N_CLASSES, N_FEATURES = 12, 3, 2


def _data(seed):
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((N_SAMPLES, N_FEATURES))
    rows /= np.maximum(1.0, np.linalg.norm(rows, axis=1))[:, None]
    return rows, rng.integers(N_CLASSES, size=N_SAMPLES)


def _inputs(rows):
    return np.hstack([rows, np.ones((len(rows), 1))])


def _loss_gradient(theta, inputs, codes):
    """sum_i grad CE(theta x~_i, y_i), shape=[K, p + 1]."""
    return (softmax(inputs @ theta.T, axis=1) - np.eye(N_CLASSES)[codes]).T @ inputs


def _hessian(theta, inputs):
    """sum_i (diag(p_i) - p_i p_i^T) kron x~_i x~_i^T, shape=[K (p + 1)] * 2."""
    total = 0
    for row in inputs:
        p = softmax(theta @ row)
        total = total + np.kron(np.diag(p) - np.outer(p, p), np.outer(row, row))
    return total


def _minimiser(inputs, codes, penalty, linear):
    shape = (N_CLASSES, inputs.shape[1])
    targets = np.eye(N_CLASSES)[codes]

    def objective(flat):
        theta = flat.reshape(shape)
        value = (-np.sum(targets * log_softmax(inputs @ theta.T, axis=1))
                 + penalty / 2 * flat @ flat + linear @ flat)
        return value, (_loss_gradient(theta, inputs, codes).ravel() + penalty * flat
                       + linear)

    return minimize(objective, np.zeros(linear.size), jac=True, method="L-BFGS-B",
                    options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 5000}).x.reshape(shape)


def _privacy_loss(theta, first, second, penalty, sigma):
    """log p_D(theta) / p_D'(theta): the Gaussian density of b_D(theta) =
    -(grad L_D(theta) + Lambda theta) times det(H_D(theta) + Lambda I), over D'."""
    def log_density(inputs, codes):
        b = -(_loss_gradient(theta, inputs, codes) + penalty * theta).ravel()
        _, logdet = np.linalg.slogdet(_hessian(theta, inputs) + penalty * np.eye(b.size))
        return -b @ b / (2 * sigma**2) + logdet
    return log_density(*first) - log_density(*second)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_the_privacy_loss_exceeds_epsilon_with_probability_at_most_delta(epsilon):
    """Outputs sampled on D (b drawn, J minimised), their privacy loss against a
    neighbour (record 0 replaced by its opposite with another label) computed from the
    densities: above epsilon in at most a delta fraction (plus the sampling error)."""
    delta, regularization, draws = 0.05, 1e-3, 400
    rows, codes = _data(shifted(0))
    other_rows, other_codes = rows.copy(), codes.copy()
    other_rows[0] = -rows[0] / np.linalg.norm(rows[0])
    other_codes[0] = (codes[0] + 1) % N_CLASSES
    first = (_inputs(rows), codes)
    second = (_inputs(other_rows), other_codes)
    penalty, sigma, jacobian = objective_perturbation_plan(
        N_SAMPLES, N_CLASSES, epsilon, delta, regularization)
    assert jacobian <= epsilon / 2 + 1e-12
    rng = np.random.default_rng(shifted(1))
    losses = []
    for _ in range(draws):
        linear = rng.normal(0.0, sigma, N_CLASSES * (N_FEATURES + 1))
        theta = _minimiser(*first, penalty, linear)
        losses.extend([_privacy_loss(theta, first, second, penalty, sigma),
                       _privacy_loss(_minimiser(*second, penalty, linear), second, first,
                                     penalty, sigma)])
    exceeded = np.mean(np.asarray(losses) > epsilon)
    assert exceeded <= delta + 3 * np.sqrt(delta * (1 - delta) / len(losses))


def test_the_release_is_the_penalised_logistic_regression_at_a_huge_epsilon():
    """At epsilon 1e12 (sigma ~ 2 zeta / sqrt(2 epsilon)) the noise is negligible and the
    public number of solver steps reaches the exact minimiser."""
    rows, codes = _data(3)
    regularization = 0.05
    release = LogisticObjectiveRelease(N_SAMPLES, N_CLASSES, N_FEATURES, regularization,
                                       1e12, 1e-5)
    fitted = release.release((rows, codes), None, np.random.default_rng(0))
    reference = LogisticRegression(C=1 / (N_SAMPLES * regularization),
                                   fit_intercept=False, tol=1e-12, max_iter=10_000)
    reference.fit(_inputs(rows), codes)
    np.testing.assert_allclose(fitted["coef_"], reference.coef_[:, :-1], atol=1e-4)
    np.testing.assert_allclose(fitted["intercept_"], reference.coef_[:, -1], atol=1e-4)
    (event,) = release.events()
    assert (event.epsilon, event.delta) == (1e12, 1e-5)


@pytest.mark.backend_independent
def test_the_plan_raises_the_penalty_to_the_jacobian_minimum():
    """Lambda = n lambda when the Jacobian then costs at most half of epsilon; raised to
    beta / (e^{epsilon / (2 r)} - 1) otherwise, where epsilon_J is exactly half."""
    penalty, _, jacobian = objective_perturbation_plan(1000, 4, 1.0, 1e-5, 1.0)
    assert penalty == 1000 and jacobian == pytest.approx(3 * np.log1p(1 / 1000))
    penalty, _, jacobian = objective_perturbation_plan(1000, 4, 1.0, 1e-5, 1e-6)
    assert penalty == pytest.approx(1 / np.expm1(1 / 6)) and jacobian == pytest.approx(0.5)
