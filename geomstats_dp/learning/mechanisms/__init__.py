"""Release mechanisms behind the estimators' ``method=``, and the pipeline running them.

Each states its adjacency, sensitivity and accountant in its module docstring.
"""

from geomstats_dp.learning.mechanisms.alternating_least_squares import (
    AlternatingLeastSquaresRelease,
)
from geomstats_dp.learning.mechanisms.analyze_gauss import AnalyzeGaussRelease
from geomstats_dp.learning.mechanisms.base import (
    Mechanism,
    run_release,
)
from geomstats_dp.learning.mechanisms.clip_bound import AutoClip
from geomstats_dp.learning.mechanisms.extrinsic import ExtrinsicRelease
from geomstats_dp.learning.mechanisms.gradient import GradientRelease, Preliminary
from geomstats_dp.learning.mechanisms.laplace import LaplaceRelease
from geomstats_dp.learning.mechanisms.lloyd import LloydRelease
from geomstats_dp.learning.mechanisms.pca_gradient import PCAGradientRelease
from geomstats_dp.learning.mechanisms.tangent import TangentRelease, TwoStageRelease
from geomstats_dp.learning.mechanisms.tangent_labels import TangentLabelRelease
from geomstats_dp.learning.mechanisms.tangent_pca import TangentPCARelease

__all__ = ["AlternatingLeastSquaresRelease", "AnalyzeGaussRelease", "AutoClip",
           "ExtrinsicRelease", "GradientRelease", "LaplaceRelease", "LloydRelease",
           "Mechanism", "PCAGradientRelease", "Preliminary", "TangentLabelRelease",
           "TangentPCARelease", "TangentRelease", "TwoStageRelease", "run_release"]
