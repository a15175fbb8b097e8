"""Private estimators with geomstats' scikit-learn-style ``fit``, on one private core."""

from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
)
from geomstats_dp.learning.erm import PrivateERM
from geomstats_dp.learning.frechet_mean import PrivateFrechetMean
from geomstats_dp.learning.geometric_median import PrivateGeometricMedian
from geomstats_dp.learning.kmeans import PrivateKMeans
from geomstats_dp.learning.matrix_completion import PrivateMatrixCompletion
from geomstats_dp.learning.pca import PrivatePCA
from geomstats_dp.learning.structured_prediction import PrivateStructuredPrediction
from geomstats_dp.learning.tangent_pca import PrivateTangentPCA

__all__ = ["NoiseDominatesWarning", "PrivateERM", "PrivateFrechetMean",
           "PrivateGeometricMedian", "PrivateKMeans", "PrivateMatrixCompletion",
           "PrivatePCA", "PrivateStructuredPrediction", "PrivateTangentPCA",
           "ScheduleStopsShortWarning"]
