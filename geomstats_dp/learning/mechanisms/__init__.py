"""Release mechanisms behind the estimators' ``method=``, and the pipeline running them."""

from geomstats_dp.learning.mechanisms.base import ReleaseMechanism, run_release
from geomstats_dp.learning.mechanisms.gradient import GradientRelease
from geomstats_dp.learning.mechanisms.tangent import TangentRelease, TwoStageRelease

__all__ = ["GradientRelease", "ReleaseMechanism", "TangentRelease", "TwoStageRelease",
           "run_release"]
