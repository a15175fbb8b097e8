"""PriRFed: private federated learning on manifolds (Huang et al. 2024).

The in-process engine is the default; ``engine="flower"`` runs the same local training in
Flower's simulation engine (extra ``flower``; flwr is imported only then).
"""

from geomstats_dp.federated.aggregation import karcher_mean, tangent_mean
from geomstats_dp.federated.estimator import PriRFed
from geomstats_dp.federated.local import local_train

__all__ = ["PriRFed", "karcher_mean", "local_train", "tangent_mean"]
