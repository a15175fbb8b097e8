"""Private estimators with geomstats' scikit-learn-style ``fit``."""

from geomstats_dp.learning.frechet_mean import PrivateFrechetMean

__all__ = ["PrivateFrechetMean"]
