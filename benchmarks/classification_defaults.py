"""Where the defaults of the private classifiers come from: synthetic SPD data only.

``python -m benchmarks classification_defaults``. The defaults of ``PrivateMDM`` and
``PrivateTangentSpaceClassifier`` are the settings of a small public grid with the best
mean accuracy over public synthetic problems, none of them the benchmark's data
(``benchmarks/classification.py``) or the tests':

* SPD(c) for c in (4, 8) (dimension d = c (c + 1) / 2), K in (2, 4) classes, n = 1000
  training records (and as many held out), epsilon in (0.1, 1, 10), delta 1e-5;
* two geometries: the records near the identity (their centre at affine-invariant
  distance 1 from I, within-class spread 0.5) or far from it (centre at distance 4,
  spread 1.5);
* a problem: a centre Exp_I(r u), class means Exp_centre(2 s u_k / sqrt(d)) and records
  Exp_{m_k}(s g / sqrt(d)), u, u_k uniform unit tangent vectors and g standard Gaussian
  orthonormal coordinates (the class means two within-class standard deviations apart
  along each direction, so that no problem is trivially separable).

Results: ``results/classification_defaults.csv`` (one row per problem, epsilon, estimator
and setting); the page ``docs/benchmarks/classification.md`` ("Defaults") gives the
derivation.
"""

import itertools
import time
import warnings

import numpy as np
from geomstats.geometry.spd_matrices import SPDMatrices
from threadpoolctl import threadpool_limits

from benchmarks.accounting import write_csv
from geomstats_dp.learning import PrivateMDM, PrivateTangentSpaceClassifier

EPSILONS = (0.1, 1.0, 10.0)
DELTA = 1e-5
CHANNELS = (4, 8)
N_CLASSES = (2, 4)
N_SAMPLES = (1000,)
GEOMETRIES = {"near": (1.0, 0.5), "far": (4.0, 1.5)}  # (distance of the centre, spread)

MDM_GRID = {"reference_fraction": (0.0, 0.2), "clip_norm": (0.5, 1.0, 2.0),
            "n_iter": (1, 3)}
TANGENT_GRID = {"method": ("noisy_gd", "objective_perturbation"),
                "clip_norm": (0.5, 1.0, 2.0), "regularization": (1e-3, 1e-2)}


def _symmetric(rng, channels, size):
    """Symmetric matrices whose upper-triangular orthonormal coordinates are standard
    Gaussian (the off-diagonal entries scaled by 1 / sqrt(2))."""
    raw = rng.standard_normal((size, channels, channels))
    return (raw + np.swapaxes(raw, 1, 2)) / 2 * np.where(np.eye(channels), 1.0,
                                                         np.sqrt(2.0))


def _expm(matrices):
    values, vectors = np.linalg.eigh(matrices)
    return (vectors * np.exp(values)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def _sqrtm(matrix):
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(values)) @ vectors.T


def _unit(matrices):
    return matrices / np.linalg.norm(matrices, axis=(-2, -1), keepdims=True)


def _exp_at(base, tangents):
    """Affine-invariant Exp_base of tangent vectors given at the identity's frame."""
    root = _sqrtm(base)
    return root @ _expm(tangents) @ root


def synthetic_problem(channels, n_classes, n_samples, geometry, seed):
    """Training and held-out (X, y) of one synthetic problem (module docstring)."""
    distance, spread = GEOMETRIES[geometry]
    rng = np.random.default_rng(seed)
    dim = channels * (channels + 1) // 2
    centre = _expm(distance * _unit(_symmetric(rng, channels, 1))[0])
    means = _exp_at(centre, 2 * spread / np.sqrt(dim)
                    * _unit(_symmetric(rng, channels, n_classes)))
    labels = rng.integers(n_classes, size=2 * n_samples)
    points = np.stack([_exp_at(means[k], spread / np.sqrt(dim)
                               * _symmetric(rng, channels, 1)[0]) for k in labels])
    points = (points + np.swapaxes(points, 1, 2)) / 2
    return (points[:n_samples], labels[:n_samples]), (points[n_samples:],
                                                      labels[n_samples:])


def _settings(grid):
    names = list(grid)
    for values in itertools.product(*grid.values()):
        yield dict(zip(names, values))


def _estimator(name, space, classes, epsilon, seed, setting):
    if name == "mdm":
        return PrivateMDM(space, epsilon=epsilon, delta=DELTA, classes=classes,
                          random_state=seed, **setting)
    return PrivateTangentSpaceClassifier(space, epsilon=epsilon, delta=DELTA,
                                         classes=classes, random_state=seed, **setting)


def run(output_dir, quick=False):
    """Score every setting of both grids on every synthetic problem; write the CSV."""
    rows = []
    problems = list(itertools.product(CHANNELS, N_CLASSES, N_SAMPLES, GEOMETRIES))
    if quick:
        problems = problems[:2]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, (channels, n_classes, n_samples, geometry) in enumerate(problems):
            (X, y), (X_test, y_test) = synthetic_problem(channels, n_classes, n_samples,
                                                         geometry, seed=index)
            space, classes = SPDMatrices(channels), np.arange(n_classes)
            for epsilon in EPSILONS:
                for name, grid in (("mdm", MDM_GRID), ("tangent", TANGENT_GRID)):
                    for setting in _settings(grid):
                        start = time.perf_counter()
                        model = _estimator(name, space, classes, epsilon, index, setting)
                        accuracy = float(np.mean(model.fit(X, y).predict(X_test)
                                                 == y_test))
                        rows.append({"channels": channels, "n_classes": n_classes,
                                     "n_samples": n_samples, "geometry": geometry,
                                     "epsilon": epsilon, "estimator": name,
                                     "setting": repr(setting), "accuracy": accuracy,
                                     "seconds": time.perf_counter() - start})
            print(f"problem {index + 1}/{len(problems)} done", flush=True)
    write_csv(output_dir / "classification_defaults.csv", rows)
    _print_best(rows)


def _print_best(rows):
    """The mean accuracy of each setting over the problems and epsilons, best first."""
    for name in ("mdm", "tangent"):
        table = {}
        for row in rows:
            if row["estimator"] == name:
                table.setdefault(row["setting"], []).append(row["accuracy"])
        ranked = sorted(table.items(), key=lambda item: -np.mean(item[1]))
        for setting, values in ranked[:8]:
            print(f"{name:8s} {np.mean(values):.4f} {setting}", flush=True)
