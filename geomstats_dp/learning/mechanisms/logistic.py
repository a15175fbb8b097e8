"""A private multinomial logistic regression by noisy gradient descent on feature rows.

Minimises (1/n) sum_i CE(W x~_i + b, y_i) + lambda/2 ||W||_F^2 (x~_i the row scaled to
norm at most 1, the intercept b unpenalised) by ``n_iter`` full-batch steps

    theta <- theta - eta ((sum_i clip_G(g_i) + xi) / n + lambda (W, 0)),
    xi ~ N(0, (2 G z)^2 I),

g_i the per-record gradient of the cross-entropy in (W, b), clipped to l2 norm G; the
release is the mean of the iterates of the second half (post-processing).

Privacy. Adjacency: replace-one on whole records (row and label: the labels are private).
Sensitivity of a step's sum: 2G (one clipped gradient replaced by another). Accountant:
``n_iter`` full-batch Gaussian releases with one multiplier z, composed exactly in
Gaussian DP (one GaussianEvent with ``n_steps``), calibrated before any data is read.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from geomstats_dp.learning._tangent_frame import clip_rows
from geomstats_dp.learning.mechanisms.base import Mechanism
from geomstats_dp.optim.clipping import clipped_sum_sensitivity
from geomstats_dp.privacy import GaussianEvent
from geomstats_dp.privacy.stages import noisy_stage


def design(rows, codes, n_classes):
    """(x~, one-hot targets): the rows with non-finite entries zeroed, clipped to norm 1
    and a column of ones appended, shape=[n_samples, n_features + 1]; the codes one-hot,
    shape=[n_samples, n_classes]."""
    finite = np.nan_to_num(rows, nan=0.0, posinf=0.0, neginf=0.0)
    inputs = np.hstack([clip_rows(finite, 1.0), np.ones((len(rows), 1))])
    return inputs, np.eye(n_classes)[codes]


@dataclass(frozen=True)
class LogisticRelease(Mechanism):
    """Noisy full-batch gradient descent of a multinomial logistic model (module notes).

    Parameters
    ----------
    n_samples : int
        Public n.
    n_classes : int
    n_features : int
    gradient_clip : float
        G.
    regularization : float
        lambda.
    n_iter : int
    step_size : float
        eta.
    noise_multiplier : float
        z.
    label : str
        Prefix of the ledger event.
    """

    n_samples: int
    n_classes: int
    n_features: int
    gradient_clip: float
    regularization: float
    n_iter: int
    step_size: float
    noise_multiplier: float
    label: str = "logistic"

    def events(self):
        sensitivity = clipped_sum_sensitivity(self.gradient_clip, 1)
        return (GaussianEvent.from_noise(self.noise_multiplier * sensitivity, sensitivity,
                                         n_steps=self.n_iter,
                                         label=f"{self.label}: gradient sums"),)

    def release(self, data, weights, rng):
        """Fit on ``data = (rows, codes)``, the rows clipped to norm 1 (again);
        returns ``coef_``, shape=[n_classes, n_features], and ``intercept_``."""
        inputs, targets = design(*data, self.n_classes)
        theta = np.zeros((self.n_classes, self.n_features + 1))
        penalty = np.ones_like(theta)
        penalty[:, -1] = 0.0
        sigma = clipped_sum_sensitivity(self.gradient_clip, 1,
                                        multiplier=self.noise_multiplier)
        average, kept = np.zeros_like(theta), 0
        for step in range(self.n_iter):
            residuals = softmax(inputs @ theta.T, axis=1) - targets
            norms = np.linalg.norm(residuals, axis=1) * np.linalg.norm(inputs, axis=1)
            factors = np.minimum(1.0, self.gradient_clip / np.maximum(norms, 1e-300))
            total = (residuals * factors[:, None]).T @ inputs
            noisy = noisy_stage(total, rng.normal(0.0, sigma, total.shape),
                                label=f"{self.label}: gradient sums", law="gaussian",
                                scale=sigma, sensitivity=clipped_sum_sensitivity(self.gradient_clip, 1),
                                dim=total.size)
            theta = theta - self.step_size * (np.asarray(noisy) / self.n_samples
                                              + self.regularization * penalty * theta)
            if step >= self.n_iter // 2:
                average, kept = average + theta, kept + 1
        theta = average / kept
        return {"coef_": theta[:, :-1], "intercept_": theta[:, -1],
                "noise_multiplier_": self.noise_multiplier, "n_iter_": self.n_iter}
