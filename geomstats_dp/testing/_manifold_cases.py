"""The built-in cases of the manifold estimators of issue 32 (``PrivateKMeans``,
``PrivateTangentPCA``, ``PrivateGeometricMedian``), with planted structures and
geomstats' non-private counterparts as references (``_cases.built_in_cases``)."""

import math

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean
from geomstats.learning.geometric_median import GeometricMedian
from geomstats.learning.kmeans import RiemannianKMeans

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.baselines.gram_schmidt import orthonormal_basis
from geomstats_dp.learning import (
    PrivateGeometricMedian,
    PrivateKMeans,
    PrivateTangentPCA,
)
from geomstats_dp.optim import canonical_point
from geomstats_dp.testing._case import (
    CHEAP_SPACES,
    N_SAMPLES,
    SEED,
    Case,
    _cloud,
    riemannian_distance,
    subspace_distance,
)


def _centre(space, offset, seed):
    """A point at distance ``offset`` from the canonical point, its direction drawn with
    ``seed``."""
    start = canonical_point(space)
    direction = TangentGaussian(space).sample(start, sigma=1.0, random_state=seed)
    return space.metric.exp(direction * offset / space.metric.norm(direction, start), start)


def planted_clusters(space, n_clusters, n_samples, spread, seed, offset=0.6):
    """``n_clusters`` tight clusters (tangent spread ``spread``) around centres at
    distance ``offset`` from the canonical point in evenly spaced directions of a plane;
    records ordered cluster by cluster, shape=[n_samples, *space.shape]."""
    start = canonical_point(space)
    plane = orthonormal_basis(space, space.metric, start)[:2]
    sampler = TangentGaussian(space)
    sizes = np.diff(np.linspace(0, n_samples, n_clusters + 1).astype(int))
    blocks = []
    for j, size in enumerate(sizes):
        angle = 2 * math.pi * j / n_clusters
        direction = to_backend(offset * (math.cos(angle) * plane[0]
                                         + math.sin(angle) * plane[1]))
        centre = space.metric.exp(direction, start)
        spread_vecs = sampler.sample(centre, n_samples=int(size),
                                     sigma=spread / math.sqrt(space.dim),
                                     random_state=seed + j)
        blocks.append(to_numpy(space.metric.exp(spread_vecs, centre)))
    return to_backend(np.concatenate(blocks))


def kmeans_reference(space, n_clusters):
    """geomstats' ``RiemannianKMeans`` started at the first record of each planted
    cluster (``planted_clusters`` orders them): the centres [k, *space.shape]."""
    def reference(X, y=None):
        starts = np.linspace(0, len(X), n_clusters + 1).astype(int)[:-1]
        kmeans = RiemannianKMeans(space, n_clusters, init=X[starts], tol=1e-8,
                                  max_iter=100)
        return kmeans.fit(X).cluster_centers_

    return reference


def centres_distance(space):
    """The largest distance of a reference centre to its nearest released centre (the
    labelling of the clusters is arbitrary)."""

    def distance(release, answer):
        release, answer = to_backend(release), to_backend(answer)
        return max(float(np.min(to_numpy(space.metric.dist(release, centre))))
                   for centre in answer)

    return distance


def elongated_cloud(space, n_samples, seed, scales=(0.4, 0.1), offset=0.3):
    """Points Exp_c(sum_j s_j g_j e_j), g_j ~ N(0, 1), e_j orthonormal at a centre c at
    distance ``offset`` from the canonical point: a planted leading direction e_0."""
    centre = _centre(space, offset, seed)
    basis = orthonormal_basis(space, space.metric, centre)[:len(scales)]
    coefficients = np.random.default_rng(seed).standard_normal((n_samples, len(scales)))
    flat = (coefficients * np.asarray(scales)) @ basis.reshape(len(scales), -1)
    vectors = to_backend(flat.reshape((n_samples,) + tuple(space.shape)))
    return space.metric.exp(vectors, centre)


def tangent_pca_reference(space):
    """geomstats' ``TangentPCA`` computation (one component): the top right singular
    vector of the centred log-maps at geomstats' Frechet mean, for a space whose points
    are vectors (the sphere: tangent vectors in ambient coordinates). Written out because
    ``TangentPCA.fit`` fails on the pytorch backend (scikit-learn's ``svd_flip`` on a
    torch tensor)."""
    def reference(X, y=None):
        mean = FrechetMean(space).fit(X).estimate_
        logs = np.asarray(to_numpy(space.metric.log(X, mean)))
        return np.linalg.svd(logs - logs.mean(axis=0), full_matrices=False)[2][:1]

    return reference


def geometric_median_reference(space):
    """geomstats' non-private ``GeometricMedian`` (Weiszfeld) of X."""
    def reference(X, y=None):
        return GeometricMedian(space, max_iter=1000, epsilon=1e-10).fit(X).estimate_

    return reference


def manifold_cases():
    """PrivateKMeans, PrivateTangentPCA and PrivateGeometricMedian (issue 32)."""
    cases = []
    spaces = {"sphere": Hypersphere(2), "euclidean": Euclidean(2)}
    for space_name, init in (("sphere", "private"), ("euclidean", None)):
        space = spaces[space_name]
        clusters = planted_clusters(space, 3, N_SAMPLES + 5, 0.1, SEED)
        if init is None:  # public centres: the first record of each planted cluster
            init = to_numpy(clusters)[[0, 15, 30]]
        name = repr(init) if isinstance(init, str) else "array"
        cases.append(Case(f"PrivateKMeans(init={name},space={space_name})",
                          PrivateKMeans(space, 3, epsilon=3.0, clip_norm=0.5, init=init,
                                        random_state=SEED), clusters,
                          reference=kmeans_reference(space, 3),
                          distance=centres_distance(space), tolerance=5e-2))
    sphere = spaces["sphere"]
    elongated = elongated_cloud(sphere, N_SAMPLES, SEED)
    cases.append(Case("PrivateTangentPCA(space=sphere)",
                      PrivateTangentPCA(sphere, 1, epsilon=3.0, clip_norm=1.0,
                                        random_state=SEED), elongated,
                      reference=tangent_pca_reference(sphere), distance=subspace_distance,
                      tolerance=5e-2))
    spd = SPDMatrices(2)
    cases.append(Case("PrivateTangentPCA(base_point=identity,space=spd)",
                      PrivateTangentPCA(spd, 2, epsilon=3.0, clip_norm=1.0,
                                        base_point=np.eye(2), random_state=SEED),
                      elongated_cloud(spd, N_SAMPLES, SEED)))
    for space_name, make in CHEAP_SPACES.items():
        space = make()
        cases.append(Case(f"PrivateGeometricMedian(space={space_name})",
                          PrivateGeometricMedian(space, epsilon=1.0, random_state=SEED),
                          _cloud(space, N_SAMPLES, 0.5, SEED),
                          reference=geometric_median_reference(space),
                          distance=riemannian_distance(space), tolerance=5e-2))
    return cases
