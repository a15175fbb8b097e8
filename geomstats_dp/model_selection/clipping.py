"""Validation losses clipped to [0, B]: the bounded query of a private score.

A non-finite loss counts as B, so that no value of the data raises, and replacing one
record moves the clipped sum by at most B.
"""

import numpy as np


def clipped_losses(losses, loss_bound):
    """``losses`` clipped to [0, loss_bound] (a non-finite loss counts as the bound)."""
    losses = np.nan_to_num(np.asarray(losses, dtype=np.float64), nan=loss_bound,
                           posinf=loss_bound, neginf=0.0)
    return np.clip(losses, 0.0, loss_bound)

