"""The rejection loop shared by the exact samplers (radial laws, SPD spectra, balls)."""

import math

import numpy as np

MIN_ACCEPTANCE = 1e-3
MIN_PROPOSALS_BEFORE_GIVING_UP = 20_000
MAX_BATCH = 200_000


class LowAcceptanceError(ValueError):
    """Raised when a rejection sampler accepts too rarely to be worth running."""


def rejection_sample(propose, n_samples, rng, what, min_acceptance=MIN_ACCEPTANCE):
    """Collect ``n_samples`` accepted proposals.

    Parameters
    ----------
    propose : callable
        ``propose(size, rng) -> (values, keep)``: ``values`` has leading axis ``size``
        (numpy), ``keep`` is a boolean numpy array of shape [size].
    n_samples : int
    rng : numpy.random.Generator
    what : str
        Name of the envelope, for the error message.
    min_acceptance : float
        Give up (``LowAcceptanceError``) once at least 20,000 proposals have been made
        and fewer than this fraction were accepted; 0 never gives up.

    Returns
    -------
    values : numpy.ndarray, shape=[n_samples, ...]
    """
    accepted, n_accepted, n_proposed = [], 0, 0
    rate = 1.0
    while n_accepted < n_samples:
        missing = n_samples - n_accepted
        size = int(min(MAX_BATCH, max(16, math.ceil(1.2 * missing / rate) + 8)))
        values, keep = propose(size, rng)
        accepted.append(values[keep])
        n_accepted += int(keep.sum())
        n_proposed += size
        rate = max(n_accepted / n_proposed, min_acceptance / 2, 1.0 / MAX_BATCH)
        if n_proposed >= MIN_PROPOSALS_BEFORE_GIVING_UP and n_accepted < min_acceptance * n_proposed:
            raise LowAcceptanceError(
                f"rejection from the {what} accepted {n_accepted} of {n_proposed} "
                f"proposals (below {min_acceptance:g}); use method='mcmc'"
            )
    return np.concatenate(accepted)[:n_samples]
