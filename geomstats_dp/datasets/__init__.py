"""Real data read from installed packages (nothing is downloaded at run time)."""

from geomstats_dp.datasets.emg import EMG_GESTURES, load_emg_covariances
from geomstats_dp.datasets.keel import load_keel
from geomstats_dp.datasets.movielens import load_movielens_100k, split_ratings
from geomstats_dp.datasets.wordnet import load_wordnet_mammals

__all__ = ["EMG_GESTURES", "load_emg_covariances", "load_keel", "load_movielens_100k",
           "split_ratings", "load_wordnet_mammals"]
