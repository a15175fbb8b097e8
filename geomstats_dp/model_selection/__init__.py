"""Private hyperparameter search: the whole search one ledger event, and private scores.

``PrivateGridSearchCV`` and ``PrivateRandomizedSearchCV`` release the best of a random
number of private runs (Papernot & Steinke 2022), accounted as one ``SelectionEvent``;
``private_score`` releases a clipped, noised validation loss of any fitted estimator.
"""

from geomstats_dp.model_selection.scores import private_score
from geomstats_dp.model_selection.search import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
)
from geomstats_dp.model_selection.validation_losses import record_losses

__all__ = ["PrivateGridSearchCV", "PrivateRandomizedSearchCV", "private_score",
           "record_losses"]
