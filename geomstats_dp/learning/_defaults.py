"""Data-independent defaults of the private Frechet mean, from the theory of Han et al. 2024
and Utpala et al. 2023 (full citations: docs/references.md).

The per-sample loss is f(x; z) = d(x, z)^2 / 2, geodesically 1-strongly convex on spaces
of non-positive curvature, with gradients of norm d(x, z) <= C after clipping.

- DP-RGD (Han et al. 2024, Theorem 4, Riemannian PL): constant step eta, last iterate. With
  step eta the bias decays like (1 - eta)^(2T) ~ exp(-2 eta T) while the noise floor of the last
  iterate is of order d (2C/n)^2 z^2 with z ~ sqrt(T log(1/delta)) / epsilon, so the bias
  reaches the noise floor after T = log(n^2 epsilon^2 / (d log(1/delta))) / (2 eta)
  steps: Han et al. 2024's T, with eta = 1/2 (the unit Karcher step does not converge on
  hyperbolic data of radius 1.5, docs/papers.md), so T = log(n^2 epsilon^2 / (d log(1/delta))).
- DP-RSGD (Han et al. 2024, Theorem 3, strongly convex): eta_t = 1 / (beta (t + 1)) with beta = 1,
  the 2/(t+1)-weighted geodesic average, T = n steps (Han et al. 2024, Section 6.1: T = n works
  better than the theorem's n^2), batches of about sqrt(n).
- DP-RSVRG (Utpala et al. 2023, Section 6 and Theorem 6): m = n / 10 inner steps, S = log(...) / 3
  epochs (at least 2; Theorem 6's S is logarithmic), a constant step 0.5 / m so that an
  epoch moves about as far as one DP-RGD step, and single-sample gradients
  clipped at C1 = C / 100. The variance-reduced query has sensitivity 4 C1 whatever n
  (Utpala et al. 2023, Claim 3), so its noise is of the order of C1 at every inner step;
  Utpala et al. 2023 tune C1 in {1, 0.1, 0.01} against C0 in {1, 0.1}; as C1 -> 0 the
  method tends to DP-RGD with S steps. The measurements behind C / 100 are on the
  optimiser benchmark page (docs/benchmarks/optimizers.md, "Measurements behind the
  defaults").

Noise-aware steps: with s = C / sqrt(C^2 + d sigma^2), sigma the noise standard deviation
of a step (s = 1 when the noise is small against the clipped gradients), DP-RGD steps
0.5 s and DP-RSVRG 0.5 s / m, so that a step's expected displacement stays of the order of
C (the step of Han et al. 2024, Theorem 2, eta = D / sqrt((L0^2 + d sigma^2) T), with
D = L0 = C).
DP-RSGD takes eta_t = 1 / (t + 1/s^2): the 1/t decay of Theorem 3, started at s^2 so that
the noise accumulated over the whole run, sigma sqrt(d) (sum_t eta_t^2)^(1/2) ~ sigma
sqrt(d) s, stays below C. The measurements that chose these rules (and the rules that
failed) are on docs/benchmarks/optimizers.md ("Measurements behind the defaults", "A
default that failed here, and its fix").
"""

import math

from geomstats_dp.learning._gradient_plan import FAMILIES
from geomstats_dp.optim import ConstantStep, InverseTimeStep

RGD_STEP_SIZE = 0.5


def privacy_horizon(n_samples, dim, epsilon, delta):
    """log(n^2 epsilon^2 / (d log(1/delta))), floored at 1: steps until the noise floor."""
    ratio = (n_samples * epsilon) ** 2 / (dim * math.log(1 / delta))
    return max(1.0, math.log(ratio))


def default_n_iter(method, n_samples, dim, epsilon, delta, batch_size=None):
    """Default number of steps (rgd, rsgd) or epochs (rsvrg)."""
    horizon = privacy_horizon(n_samples, dim, epsilon, delta)
    if method == "rgd":
        return math.ceil(horizon / (2 * RGD_STEP_SIZE))
    if method == "rsgd":
        return n_samples
    return max(2, math.ceil(horizon / 3))


def default_batch_size(n_samples):
    """About sqrt(n) records per DP-RSGD batch."""
    return max(1, round(math.sqrt(n_samples)))


def default_inner_steps(n_samples):
    """m = n / 10 inner steps per DP-RSVRG epoch (Utpala et al. 2023, Section 6)."""
    return max(1, n_samples // 10)


SVRG_SINGLE_CLIP_RATIO = 0.01


def default_output(method):
    """The output option each default schedule is analysed with (``GradientFamily``)."""
    return FAMILIES[method].default_output


def default_step_size(method, inner_steps, clip_norm, noise_stds, dim, smoothness=1.0):
    """The default step schedule of ``method``, shrunk when the noise dominates.

    ``smoothness`` is the loss's curvature scale relative to d(x, z)^2 / 2 (whose
    Riemannian Hessian is the identity on flat spaces); the steps are divided by it.
    """
    noise_variance = sum(std**2 for std in noise_stds)
    shrink = clip_norm / math.sqrt(clip_norm**2 + dim * noise_variance)
    if method == "rgd":
        return ConstantStep(RGD_STEP_SIZE * shrink / smoothness)
    if method == "rsgd":
        return InverseTimeStep(1.0 / smoothness, offset=1.0 / shrink**2)
    return ConstantStep(RGD_STEP_SIZE * shrink / (inner_steps * smoothness))


HORIZON_REFERENCE = 15.0


def convergence_scale(n_samples, dim, epsilon, delta):
    """max(1, horizon / HORIZON_REFERENCE): the factor by which ``PrivateERM`` lengthens
    its default schedules (DP-RGD's steps, the two-stage release's travel steps).

    The horizon counts the steps a loss of curvature 1 (the squared distance) needs to
    reach the noise floor; a loss of curvature mu needs 1 / mu times as many. A Huber
    loss with records beyond its radius D has a curvature of about D / d(x, z) across
    them, and a user's loss states none. Beyond a horizon of HORIZON_REFERENCE (a
    signal-to-noise ratio of about e^7.5 in norm) the schedule covers every curvature
    mu >= HORIZON_REFERENCE / horizon, so that the release converges for every such
    loss as epsilon grows; below it the schedule is unchanged. Public: n, d, epsilon,
    delta.
    """
    return max(1.0, privacy_horizon(n_samples, dim, epsilon, delta) / HORIZON_REFERENCE)
