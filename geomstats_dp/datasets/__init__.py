"""Real data read from installed packages (nothing is downloaded at run time)."""

from geomstats_dp.datasets.emg import EMG_GESTURES, load_emg_covariances
from geomstats_dp.datasets.keel import load_keel

__all__ = ["EMG_GESTURES", "load_emg_covariances", "load_keel"]
