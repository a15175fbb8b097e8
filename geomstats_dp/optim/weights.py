"""Sample weights: how per-sample gradients are combined (and what a replacement can move)."""

import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp._validation import check_finite_array


def normalize_sample_weight(sample_weight, n_samples):
    """Return weights w_i >= 0 summing to 1 (uniform 1/n when ``sample_weight`` is None).

    Parameters
    ----------
    sample_weight : array-like, shape=[n_samples] or None
        Public, data-independent weights (they enter the sensitivity through max_i w_i).
    n_samples : int

    Returns
    -------
    weights : numpy.ndarray, shape=[n_samples]
    """
    if sample_weight is None:
        return np.full(n_samples, 1.0 / n_samples)
    weights = to_numpy(sample_weight)
    if weights.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got {weights.shape}"
        )
    check_finite_array(weights, "sample_weight")
    if (weights < 0).any():
        index = int(np.flatnonzero(weights < 0)[0])
        raise ValueError(
            f"sample_weight must be >= 0, got {weights[index]} at index {index}"
        )
    total = weights.sum()
    if total <= 0:
        raise ValueError("sample_weight must have a positive sum, got all zeros")
    return weights / total
