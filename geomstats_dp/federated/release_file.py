"""A deployed PriRFed run's release file, read back and checked against the space.

The file is public (the release); the checks protect the user from a wrong, truncated or
tampered file, not the data.
"""

import numpy as np

from geomstats_dp._validation import check_finite_array
from geomstats_dp.distributions.membership import check_on_space

RELEASE_ATOL = 1e-6


def read_release(space, path):
    """The point saved at ``path``, checked against ``space``.

    Parameters
    ----------
    space : Manifold
        The deployed estimator's space.
    path : str or path-like
        A .npy file (no pickles).

    Returns
    -------
    point : numpy.ndarray, shape=[*space.shape]
        Finite, on ``space`` to ``RELEASE_ATOL``.
    """
    try:
        point = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"path: no release at {str(path)!r}; the deployed ServerApp writes it to the run "
            "configuration's 'out' once its rounds are done (is the run finished, and is "
            "this the server's path?)"
        ) from None
    except (ValueError, OSError) as error:
        raise ValueError(f"path: {str(path)!r} is not a .npy array: {error}") from None
    if not isinstance(point, np.ndarray):
        raise TypeError(f"path: {str(path)!r} holds an archive, not one .npy array")
    if point.dtype.kind not in "fiu":
        raise ValueError(f"path: the release must be a real array, got {point.dtype} "
                         f"in {str(path)!r}")
    if point.shape != tuple(space.shape):
        raise ValueError(f"path: the release must have the space's shape {tuple(space.shape)}"
                         f", got {point.shape} in {str(path)!r}")
    point = point.astype(float)
    check_finite_array(point, "path: the release")
    check_on_space(space, point[None], RELEASE_ATOL, "path: the release")
    return point
