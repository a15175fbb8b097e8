"""Private estimators with geomstats' scikit-learn-style ``fit``, on one private core.

Besides the estimators, the pieces other subpackages build on (``federated``,
``model_selection``): the estimators' base, the data checks, the public default rules
and the gradient release plan.
"""

from geomstats_dp.learning._base import PrivateEstimator
from geomstats_dp.learning._data import (
    check_array,
    check_record_shape,
    check_sample_count,
    check_shape,
)
from geomstats_dp.learning._defaults import (
    SVRG_SINGLE_CLIP_RATIO,
    default_batch_size,
    default_inner_steps,
    default_n_iter,
    default_step_size,
)
from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
)
from geomstats_dp.learning._gradient_plan import plan_gradient_release
from geomstats_dp.learning._tangent_frame import tangent_frame
from geomstats_dp.learning.erm import PrivateERM
from geomstats_dp.learning.frechet_mean import PrivateFrechetMean
from geomstats_dp.learning.geodesic_regression import PrivateGeodesicRegression
from geomstats_dp.learning.geometric_median import PrivateGeometricMedian
from geomstats_dp.learning.kmeans import PrivateKMeans
from geomstats_dp.learning.matrix_completion import PrivateMatrixCompletion
from geomstats_dp.learning.mdm import PrivateMDM
from geomstats_dp.learning.pca import PrivatePCA
from geomstats_dp.learning.structured_prediction import PrivateStructuredPrediction
from geomstats_dp.learning.tangent_pca import PrivateTangentPCA
from geomstats_dp.learning.tangent_space import (
    PrivateTangentSpaceClassifier,
    PrivateToTangentSpace,
)

__all__ = ["SVRG_SINGLE_CLIP_RATIO", "NoiseDominatesWarning", "PrivateERM",
           "PrivateEstimator", "PrivateFrechetMean", "PrivateGeodesicRegression",
           "PrivateGeometricMedian", "PrivateKMeans",
           "PrivateMDM", "PrivateMatrixCompletion", "PrivatePCA",
           "PrivateStructuredPrediction", "PrivateTangentPCA",
           "PrivateTangentSpaceClassifier", "PrivateToTangentSpace",
           "ScheduleStopsShortWarning", "check_array", "check_record_shape",
           "check_sample_count", "check_shape", "default_batch_size", "default_inner_steps",
           "default_n_iter", "default_step_size", "plan_gradient_release", "tangent_frame"]
