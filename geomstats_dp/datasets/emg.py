"""Real data shipped with the installed packages (no download): geomstats' EMG recordings.

The EMG recordings (8 electrodes, hand gestures rock/paper/scissors/ok) are cut as in
geomstats' EMG tutorial: each contiguous run of one gesture loses ``margin`` time steps at
both ends (transients), the rest is split into windows of ``n_steps`` time steps, and each
window becomes the 8 x 8 covariance matrix of its electrodes.
"""

import numpy as np
from geomstats.datasets.utils import load_emg

from geomstats_dp._backend import to_backend
from geomstats_dp._validation import check_positive_int

EMG_GESTURES = ("rock", "scissors", "paper", "ok")
N_ELECTRODES = 8


def _window_starts(run_ids, n_steps, margin):
    """First index of each window, windows kept inside runs of equal ``run_ids``."""
    boundaries = np.flatnonzero(np.diff(run_ids)) + 1
    run_starts = np.concatenate([[0], boundaries]) + margin
    run_ends = np.concatenate([boundaries, [len(run_ids)]]) - margin
    return np.concatenate(
        [np.arange(start, end - n_steps + 1, n_steps) for start, end in zip(run_starts, run_ends)]
    ).astype(np.int64)


def load_emg_covariances(gesture=None, n_steps=100, margin=1000):
    """Load the EMG covariance matrices, SPD(8), one per window of ``n_steps`` samples.

    Parameters
    ----------
    gesture : str or None
        One of ``EMG_GESTURES`` to keep a single class; None keeps all four.
    n_steps : int
        Time steps per window (100 gives about 3,800 matrices in total).
    margin : int
        Time steps dropped at both ends of each run of one gesture (transients).

    Returns
    -------
    covariances : array-like, shape=[n_samples, 8, 8]
        Backend array of SPD matrices (sample covariances, unbiased).
    labels : numpy.ndarray of int, shape=[n_samples]
        Index of each window's gesture in ``EMG_GESTURES``.
    """
    n_steps = check_positive_int(n_steps, "n_steps", minimum=N_ELECTRODES + 1)
    margin = check_positive_int(margin, "margin", minimum=0)
    if gesture is not None and gesture not in EMG_GESTURES:
        raise ValueError(f"gesture must be one of {EMG_GESTURES} or None, got {gesture!r}")
    frame = load_emg()
    frame = frame[frame.label != "rest"]
    codes = frame.label.map({name: i for i, name in enumerate(EMG_GESTURES)}).to_numpy()
    experiments = np.unique(frame.exp.to_numpy(), return_inverse=True)[1]
    starts = _window_starts(codes * (experiments.max() + 1) + experiments, n_steps, margin)
    signals = frame[[f"c{i}" for i in range(N_ELECTRODES)]].to_numpy(dtype=np.float64)
    windows = signals[starts[:, None] + np.arange(n_steps)]
    centred = windows - windows.mean(axis=1, keepdims=True)
    covariances = np.einsum("nti,ntj->nij", centred, centred) / (n_steps - 1)
    labels = codes[starts]
    if gesture is not None:
        keep = labels == EMG_GESTURES.index(gesture)
        covariances, labels = covariances[keep], labels[keep]
    return to_backend(covariances), labels
