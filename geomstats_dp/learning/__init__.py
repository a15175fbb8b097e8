"""Private estimators with geomstats' scikit-learn-style ``fit``, on one private core."""

from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
)
from geomstats_dp.learning.erm import PrivateERM
from geomstats_dp.learning.frechet_mean import PrivateFrechetMean
from geomstats_dp.learning.matrix_completion import PrivateMatrixCompletion
from geomstats_dp.learning.mdm import PrivateMDM
from geomstats_dp.learning.pca import PrivatePCA
from geomstats_dp.learning.structured_prediction import PrivateStructuredPrediction
from geomstats_dp.learning.tangent_space import (
    PrivateTangentSpaceClassifier,
    PrivateToTangentSpace,
)

__all__ = [
    "NoiseDominatesWarning",
    "PrivateERM",
    "PrivateFrechetMean",
    "PrivateMDM",
    "PrivateMatrixCompletion",
    "PrivatePCA",
    "PrivateStructuredPrediction",
    "PrivateTangentSpaceClassifier",
    "PrivateToTangentSpace",
    "ScheduleStopsShortWarning",
]
