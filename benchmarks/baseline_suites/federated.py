"""PriRFed's defaults against one-shot private averaging (``benchmarks.federated_baselines``).

The rows of ``benchmarks/federated_baselines.py`` (its docstring states the data, the
methods and the error), run through the common harness; ``non_private`` and the
noiseless one-shot average are recorded at epsilon = inf.
"""

from benchmarks.federated_baselines import DATASETS, dataset_rows

ESTIMATOR = "PriRFed"


def rows(quick):
    """One row per (dataset, method, epsilon, seed)."""
    for name in DATASETS:
        yield from dataset_rows(name, quick)[0]
