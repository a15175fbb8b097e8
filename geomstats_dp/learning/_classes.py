"""What the private classifiers share: their classes, label codes and common parameters."""

import warnings
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from geomstats_dp.privacy import PrivacyLeakWarning

PRIVACY_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither")],
    "delta": [Interval(Real, 0, 1, closed="neither")],
    "budget": "no_validation",  # a PrivacyBudget or None (resolve_budget checks it)
    "random_state": "no_validation",  # None, int or Generator (get_rng checks it)
    "secure": ["boolean"],
}


def class_codes(y, classes, n_samples, private):
    """The classes and the code of each label, refusing labels outside ``classes``.

    Parameters
    ----------
    y : array-like, shape=[n_samples]
    classes : array-like or None
        The public classes; None: those of ``y`` (a PrivacyLeakWarning when the labels
        are private: which classes occur is then read from them).
    n_samples : int
    private : bool

    Returns
    -------
    classes : numpy.ndarray, shape=[n_classes]
    codes : numpy.ndarray of int, shape=[n_samples]

    Raises
    ------
    ValueError
        ``y`` of the wrong shape, fewer than two classes, or a label (its index named)
        outside ``classes``.
    """
    labels = np.asarray(y)
    if labels.shape != (n_samples,):
        raise ValueError(f"y must have shape [{n_samples}], got {labels.shape}")
    if classes is None:
        if private:
            warnings.warn("classes were read from the private labels; pass the public "
                          "classes as classes=", PrivacyLeakWarning, stacklevel=3)
        known = np.unique(labels)
    else:
        known = np.asarray(classes)
        if known.ndim != 1 or len(np.unique(known)) != len(known):
            raise ValueError("classes must be a 1-d array of distinct labels")
    if len(known) < 2:
        raise ValueError(f"classes must hold at least 2 classes, got {len(known)}")
    codes = np.searchsorted(np.sort(known), labels)
    order = np.argsort(known)
    codes = np.clip(codes, 0, len(known) - 1)
    outside = np.flatnonzero(np.sort(known)[codes] != labels)
    if outside.size:
        raise ValueError(f"y holds labels outside classes at indices {outside[:5].tolist()}")
    return known, order[codes]
