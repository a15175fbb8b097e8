"""What a fit shows besides its release: ``geomstats_dp.testing``'s ``public_outputs``."""

from geomstats_dp.testing._observables import public_outputs

__all__ = ["public_outputs"]
