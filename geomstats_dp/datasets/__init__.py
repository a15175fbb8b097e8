"""Real data read from installed packages (nothing is downloaded at run time)."""

from geomstats_dp.datasets.emg import EMG_GESTURES, load_emg_covariances

__all__ = ["EMG_GESTURES", "load_emg_covariances"]
