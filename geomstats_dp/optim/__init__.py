"""Differentially private Riemannian optimisation: DP-RGD, DP-RSGD, DP-RSVRG (+ restarts).

One loop (``minimize``) runs every algorithm; a strategy object says how each step's
noisy gradient is formed. Noise standard deviations are given by the caller (the
estimator calibrates them); nothing here reads a privacy budget.
"""

from geomstats_dp.optim.callable_loss import CallableLoss
from geomstats_dp.optim.clipping import clip_tangent_vectors
from geomstats_dp.optim.full_batch import FullBatch
from geomstats_dp.optim.gradients import riemannian_gradient
from geomstats_dp.optim.huber import HuberDistanceLoss
from geomstats_dp.optim.initial_point import canonical_point
from geomstats_dp.optim.loop import minimize
from geomstats_dp.optim.losses import AutodiffLoss, PerSampleLoss, SquaredDistanceLoss
from geomstats_dp.optim.mini_batch import MiniBatch
from geomstats_dp.optim.outputs import OUTPUTS
from geomstats_dp.optim.result import OptimizerResult
from geomstats_dp.optim.samples import PairedSamples
from geomstats_dp.optim.schedules import ConstantStep, InverseSqrtStep, InverseTimeStep
from geomstats_dp.optim.strategies import NoisyQuery, Strategy
from geomstats_dp.optim.transport import VectorTransport, resolve_transport
from geomstats_dp.optim.variance_reduced import VarianceReduced
from geomstats_dp.optim.weights import normalize_sample_weight

__all__ = [
    "OUTPUTS",
    "AutodiffLoss",
    "CallableLoss",
    "ConstantStep",
    "FullBatch",
    "HuberDistanceLoss",
    "InverseSqrtStep",
    "InverseTimeStep",
    "MiniBatch",
    "NoisyQuery",
    "OptimizerResult",
    "PairedSamples",
    "PerSampleLoss",
    "SquaredDistanceLoss",
    "Strategy",
    "VarianceReduced",
    "VectorTransport",
    "canonical_point",
    "clip_tangent_vectors",
    "minimize",
    "normalize_sample_weight",
    "resolve_transport",
    "riemannian_gradient",
]
