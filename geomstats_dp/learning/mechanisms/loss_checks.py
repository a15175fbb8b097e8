"""Checks and measurements of a loss that the gradient-based releases share.

``probe_loss`` runs on a public dummy record only; ``infer_clip_norm`` reads the data
(``optim.oracle.gradient_norms``), with a PrivacyLeakWarning (a bound read from the data
is not private).
"""

import warnings

import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning._diagnostics import user_stacklevel
from geomstats_dp.optim.dummy import dummy_records
from geomstats_dp.optim.oracle import gradient_norms
from geomstats_dp.privacy import PrivacyLeakWarning


def probe_loss(loss, data, point):
    """Check the shapes of the loss's values and gradients on one public dummy record.

    The record (``optim.dummy.dummy_records``) has the shape of the data's rows and
    public values, and ``point`` is the public start: whether this raises, and what it
    says, depends on public quantities only. Non-finite values are allowed (the dummy may
    lie outside the loss's domain); on data, a record whose loss or gradient is not
    finite, or raises, contributes zero.
    """
    record = dummy_records(loss.space, data, point, n_records=1)
    try:
        values = to_numpy(loss.values(point, record))
        grads = to_numpy(loss.gradients(point, record))
    except Exception as error:
        raise ValueError(
            f"loss {loss.name} raised {type(error).__name__}: {error} on a public dummy "
            f"record of the data's shape at the initial point; a loss must accept any "
            "record of that shape (a record it cannot evaluate must give a non-finite "
            "value, which counts as zero, not an exception)"
        ) from error
    if values.shape != (1,):
        raise ValueError(
            f"loss {loss.name} must return one value per sample, shape (1,) for one "
            f"record; got {values.shape}"
        )
    expected = (1,) + tuple(loss.space.shape)
    if grads.shape != expected:
        raise ValueError(
            f"loss {loss.name} gradients must have shape {expected} (one per sample), "
            f"got {grads.shape}"
        )


def infer_clip_norm(loss, data, point):
    """Largest per-sample gradient norm at the initial point, with a leak warning."""
    warnings.warn(
        "clip_norm was inferred from the data (largest per-sample gradient norm at the "
        "initial point); this bound is not private. Pass a public clip_norm, or "
        "clip_norm='auto' for a private estimate.",
        PrivacyLeakWarning,
        stacklevel=user_stacklevel(),
    )
    norms = gradient_norms(loss, data, point)
    norms = norms[np.isfinite(norms)]
    return float(max(norms.max(initial=0.0), 1e-12))
