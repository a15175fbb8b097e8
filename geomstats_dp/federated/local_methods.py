"""What one agent runs in a PriRFed round: a private local method, calibrated from public
quantities (its size, the clip norm, its local guarantee).

Each method is a small object behind ``PriRFed(local_method=...)``: ``check_loss`` (is it
defined for this loss) and ``plan`` (the calibrated strategy, whose queries are the events
the accountant composes, and the step schedule). Adjacency: record level, replace-one
within the agent (its size n_i is public).

- ``GradientDescent("rgd" | "rsgd" | "rsvrg")``: DP-RGD, DP-RSGD or DP-RSVRG local steps,
  the plan and default step schedule of ``PrivateERM`` (sensitivities 2C/n_i, 2C/b, and
  2C/n_i with 4 C1 for DP-RSVRG).
- ``TangentMean``: the clipped tangent mean of the agent's records at the broadcast point
  x, Exp_x(1/n_i sum_j clip_C(Log_x z_j) + N(0, sigma^2 I)) with sigma = z 2C/n_i (one
  record moves the clipped mean by at most 2C/n_i), repeated ``local_steps`` times from
  the new point. For the squared distance d(x, z)^2 / 2, whose gradient is -Log_x(z),
  this is exactly a full-batch DP-RGD step of unit step size (the Karcher step), so it is
  planned and run by the same code: one Gaussian release of sensitivity 2C/n_i per step.
"""

from geomstats_dp.learning import (
    SVRG_SINGLE_CLIP_RATIO,
    default_inner_steps,
    default_step_size,
    plan_gradient_release,
)
from geomstats_dp.optim import ConstantStep, SquaredDistanceLoss


class GradientDescent:
    """DP-RGD, DP-RSGD or DP-RSVRG local steps (``learning.plan_gradient_release``).

    Parameters
    ----------
    method : {"rgd", "rsgd", "rsvrg"}
    """

    def __init__(self, method):
        self.method = method

    def check_loss(self, loss):
        """Every per-sample loss is accepted."""

    def plan(self, epsilon, delta, size, n_steps, clip_norm, batch_size, dim, step_size=None):
        """One agent's calibrated plan and step schedule.

        Parameters
        ----------
        epsilon, delta : float
            The agent's local guarantee (the accountant's calibration).
        size : int
            n_i, public.
        n_steps : int
            K, local steps (epochs for rsvrg).
        clip_norm : float
            C.
        batch_size : int
            rsgd batch size.
        dim : int
            The manifold's dimension (noise-aware default step).
        step_size : float or callable, optional
            The user's; default ``learning.default_step_size``.

        Returns
        -------
        plan : GradientPlan
        step_size : float or callable
        """
        inner_steps = default_inner_steps(size)
        plan = plan_gradient_release(
            self.method, epsilon, delta, size, n_steps, clip_norm, batch_size, inner_steps,
            SVRG_SINGLE_CLIP_RATIO * clip_norm, label="PriRFed agent",
        )
        return plan, step_size or default_step_size(
            self.method, inner_steps, clip_norm, plan.strategy.noise_stds, dim)


class TangentMean:
    """The agent's noisy clipped tangent mean at the broadcast point (squared distance only).

    A full-batch DP-RGD step of unit step size on d(x, z)^2 / 2: the strategy and its
    event (sensitivity 2C/n_i, one Gaussian release per local step) are DP-RGD's.
    """

    def check_loss(self, loss):
        """Raise unless ``loss`` is the squared distance (the tangent mean's loss)."""
        if not isinstance(loss, SquaredDistanceLoss):
            raise TypeError("loss must be the squared distance (loss=None) for "
                            f"local_method='tangent_mean', got {type(loss).__name__}")

    def plan(self, epsilon, delta, size, n_steps, clip_norm, batch_size, dim, step_size=None):
        """As ``GradientDescent.plan``; the step is 1 (``step_size`` must be None or 1)."""
        if step_size not in (None, 1, 1.0):
            raise ValueError("local_method='tangent_mean' takes the unit step: step_size "
                             f"must be None, got {step_size!r}")
        plan = plan_gradient_release("rgd", epsilon, delta, size, n_steps, clip_norm,
                                     label="PriRFed agent tangent mean")
        return plan, ConstantStep(1.0)


LOCAL_METHODS = {"rsgd": GradientDescent("rsgd"), "rsvrg": GradientDescent("rsvrg"),
                 "rgd": GradientDescent("rgd"), "tangent_mean": TangentMean()}
