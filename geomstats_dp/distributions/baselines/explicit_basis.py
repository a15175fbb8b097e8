"""The paper's "Explicit" baseline: the transport's implicit basis, built explicitly."""

import numpy as np

from geomstats_dp.distributions.baselines.basis import BasisSampler


class ExplicitBasis(BasisSampler):
    """N_w(0, I) from the transported reference basis, materialised at every base point.

    The d vectors of the reference basis (computed once) are transported to the base point
    in one batched call and combined with iid N(0, 1) coordinates.

    Parameters
    ----------
    transport : IsometricTransport
        The closed-form transport whose implicit basis is built explicitly.
    """

    def __init__(self, transport):
        super().__init__(transport.space, transport.metric)
        self.transport = transport
        self.reference_basis = np.asarray(transport.reference_basis(), dtype=np.float64)

    def basis(self, base_point):
        """The reference basis transported to ``base_point``, shape=[d, *space.shape]."""
        return self.transport.transport(base_point[None], self.reference_basis[:, None])[:, 0]
