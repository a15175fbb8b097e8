"""The agents' records as PriRFed receives them: split by agent, checked shape then values.

The shape checks read no value (they run before the budget check); the value checks are
the loss's (after it). Every error names the agent and, through the loss's check, the
record's index in the agent's array. A clip norm inferred from the records is not private
(a ``PrivacyLeakWarning``).
"""

import warnings

import numpy as np

from geomstats_dp._backend import quiet_numerics, to_backend
from geomstats_dp.learning import check_array
from geomstats_dp.learning.mechanisms.loss_checks import infer_clip_norm
from geomstats_dp.privacy import PrivacyLeakWarning


def split_agents(datasets, groups=None):
    """The per-agent arrays, from a list or from X and scikit-learn's ``groups``.

    Parameters
    ----------
    datasets : list of array-like, each shape=[n_i, ...]; or X, shape=[n, ...]
    groups : array-like, shape=[n], optional
        The agent of each row of X (agents in the order of ``numpy.unique``).

    Returns
    -------
    arrays : list of array-like
    """
    if groups is None:
        if isinstance(datasets, np.ndarray) or not hasattr(datasets, "__len__"):
            raise TypeError(
                "datasets must be a list of per-agent arrays (or pass X with groups=)"
            )
        return list(datasets)
    X = check_array(datasets, "X", min_ndim=1)
    groups = np.asarray(groups)
    if groups.shape != (len(X),):
        raise ValueError(f"groups must have shape ({len(X)},), got {groups.shape}")
    return [X[groups == label] for label in np.unique(groups)]


def check_agents(datasets):
    """Shape-only checks: every agent non-empty with the same record shape.

    Parameters
    ----------
    datasets : list of array-like, each shape=[n_i, ...]

    Returns
    -------
    arrays : list of numpy.ndarray
    """
    if len(datasets) == 0:
        raise ValueError("datasets must hold at least one agent, got none")
    arrays, shape = [], None
    for index, data in enumerate(datasets):
        data = check_array(data, f"datasets[{index}] (agent {index})", min_ndim=0)
        if data.ndim < 1 or len(data) == 0:
            raise ValueError(f"datasets[{index}] (agent {index}) is empty: "
                             "every agent must hold at least one record")
        if shape is None:
            shape = data.shape[1:]
        elif data.shape[1:] != shape:
            raise ValueError(
                f"datasets[{index}] (agent {index}) has records of shape {data.shape[1:]}, "
                f"expected {shape} as agent 0"
            )
        arrays.append(data)
    return arrays


def checked_values(loss, arrays):
    """The agents' records after the loss's check of their values (backend arrays).

    Parameters
    ----------
    loss : PerSampleLoss
    arrays : list of numpy.ndarray, each shape=[n_i, ...]

    Returns
    -------
    checked : list of array-like
    """
    checked = []
    for index, data in enumerate(arrays):
        try:
            checked.append(loss.check_data(to_backend(data)))
        except (ValueError, TypeError) as error:
            raise type(error)(f"datasets[{index}] (agent {index}): {error}") from None
    return checked


def inferred_clip_norm(loss, checked, start):
    """The largest per-sample gradient norm at ``start`` over every agent's records.

    Not private: it warns with a ``PrivacyLeakWarning``.

    Parameters
    ----------
    loss : PerSampleLoss
    checked : list of array-like, each shape=[n_i, ...]
        The agents' checked records.
    start : numpy.ndarray, shape=[*space.shape]

    Returns
    -------
    clip_norm : float
    """
    with quiet_numerics(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        norms = [infer_clip_norm(loss, data, to_backend(start)) for data in checked]
    warnings.warn("clip_norm was inferred from the agents' data (largest per-sample "
                  "gradient norm at the initial point); this bound is not private.",
                  PrivacyLeakWarning, stacklevel=3)
    return max(norms)
