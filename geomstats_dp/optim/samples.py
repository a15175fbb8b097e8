"""Paired samples (x_i, y_i): what a supervised per-sample loss receives."""

import numpy as np

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp._validation import check_finite_array


class PairedSamples:
    """Features and targets indexed together, row by row.

    The optimisation loop indexes its data with integer arrays and reads ``shape[0]``;
    this container answers both for a pair of arrays, so a loss receives the pairs
    (x_i, y_i) of a batch.

    Parameters
    ----------
    X : array-like, shape=[n, ...]
    y : array-like, shape=[n, ...]
        Same first dimension as ``X``.
    """

    def __init__(self, X, y):
        if len(X) != len(y):
            raise ValueError(f"y must hold one row per row of X ({len(X)}), got {len(y)}")
        self.X = X
        self.y = y

    @property
    def shape(self):
        """(n,): the number of pairs."""
        return (len(self.X),)

    def __len__(self):
        return len(self.X)

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            return self.X[index], self.y[index]
        return PairedSamples(self.X[index], self.y[index])

    def checked(self):
        """Return the pairs as float64 backend arrays after checking they are finite."""
        X, y = to_numpy(self.X), to_numpy(self.y)
        check_finite_array(X, "X")
        check_finite_array(y, "y")
        return PairedSamples(to_backend(X), to_backend(y))
