"""The shipped WordNet mammals: closure, features, embedding, reconstruction scores."""

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.poincare_ball import PoincareBall
from scipy.sparse.csgraph import shortest_path

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import load_wordnet_mammals
from geomstats_dp.datasets.wordnet import (
    DATA,
    closure_edges,
    laplacian_eigenmap,
    poincare_distance,
    poincare_to_hyperboloid,
    reconstruction_scores,
)


@pytest.mark.backend_independent
def test_closure_is_the_transitive_mammal_closure():
    names, edges = closure_edges()
    assert len(names) == 1181 and len(edges) == 6541
    assert len({tuple(edge) for edge in edges}) == len(edges)  # no duplicate
    assert (edges[:, 0] != edges[:, 1]).all()
    index = {name: i for i, name in enumerate(names)}
    assert {"horse.n.01", "mammal.n.01", "dog.n.01"} <= set(index)
    adjacency = np.zeros((len(names),) * 2, dtype=bool)
    adjacency[edges[:, 0], edges[:, 1]] = True
    # transitively closed: every path child -> ... -> ancestor is an edge
    reach = np.isfinite(shortest_path(adjacency, unweighted=True))
    np.fill_diagonal(reach, False)
    assert (reach == adjacency).all()
    # a hierarchy: no cycle, and every synset but the top ones has mammal.n.01 above it
    assert not (adjacency & adjacency.T).any()
    tops = np.flatnonzero(~adjacency.any(axis=1))
    assert set(names[tops]) == {"mammal.n.01", "pack_animal.n.01"}
    below = adjacency[:, index["mammal.n.01"]]
    assert below.sum() == len(names) - 2
    assert adjacency[index["horse.n.01"], index["equine.n.01"]]
    assert "Princeton University" in (DATA / "WORDNET_LICENSE").read_text()


@pytest.mark.backend_independent
def test_laplacian_eigenmap_solves_the_generalised_problem():
    names, edges = closure_edges()
    features = laplacian_eigenmap(edges, len(names))
    adjacency = np.zeros((len(names),) * 2)
    adjacency[edges[:, 0], edges[:, 1]] = adjacency[edges[:, 1], edges[:, 0]] = 1
    degree = adjacency.sum(axis=1)
    laplacian_f = (np.diag(degree) - adjacency) @ features
    eigenvalues = (features * laplacian_f).sum(0) / (degree[:, None] * features**2).sum(0)
    assert np.allclose(laplacian_f, degree[:, None] * features * eigenvalues, atol=1e-8)
    assert (eigenvalues > 1e-8).all() and (np.diff(eigenvalues) >= 0).all()
    # D-orthogonal to the constant vector (the eigenvalue 0) and to each other
    gram = features.T @ (degree[:, None] * features)
    assert np.allclose(gram, np.eye(3), atol=1e-8)
    assert np.allclose(degree @ features, 0, atol=1e-8)


def test_loader_shapes_and_embedding_on_the_hyperboloid():
    features, embeddings, names = load_wordnet_mammals()
    features, embeddings = to_numpy(features), to_numpy(embeddings)
    assert features.shape == (1181, 3) and embeddings.shape == (1181, 3)
    assert np.allclose(features.mean(0), 0, atol=1e-10)
    assert np.allclose(features.std(0), 1)
    assert names.shape == (1181,) and names[0] == "aardvark.n.01"
    assert bool(Hyperboloid(2).belongs(to_backend(embeddings), atol=1e-6).all())


@pytest.mark.backend_independent
def test_poincare_to_hyperboloid_is_an_isometry():
    rng = np.random.default_rng(0)
    ball = rng.uniform(-0.6, 0.6, size=(20, 2))
    hyper = poincare_to_hyperboloid(ball)
    expected = to_numpy(PoincareBall(2).metric.dist(ball[:10], ball[10:]))
    assert np.allclose(poincare_distance(ball[:10], ball[10:])[0], expected)
    assert np.allclose(to_numpy(Hyperboloid(2).metric.dist(hyper[:10], hyper[10:])), expected)


@pytest.mark.backend_independent
def test_reconstruction_scores_on_known_embeddings():
    # a path a - b - c on a line: perfect ranking; the reversed one is the worst
    edges = np.array([[0, 1]])
    line = np.array([[0.0, 0.0], [0.1, 0.0], [0.5, 0.0]])
    assert reconstruction_scores(line, edges) == (1.0, 1.0)
    swapped = line[[0, 2, 1]]
    assert reconstruction_scores(swapped, edges) == (2.0, 0.5)


@pytest.mark.backend_independent
def test_shipped_embedding_reconstructs_the_closure():
    """Mean rank and MAP of the shipped 2-d embedding (scripts/train_poincare_embedding)."""
    names, edges = closure_edges()
    embeddings = to_numpy(load_wordnet_mammals()[1])
    ball = embeddings[:, 1:] / (1 + embeddings[:, :1])
    mean_rank, mean_ap = reconstruction_scores(ball, edges)
    # measured when it was trained: mean rank 47.35, MAP 0.247 (2 dimensions)
    assert mean_rank == pytest.approx(47.35, abs=0.01)
    assert mean_ap == pytest.approx(0.247, abs=0.001)
    # a random embedding ranks a neighbour in the middle of the ~1,170 non-neighbours
    rng = np.random.default_rng(0)
    random = rng.uniform(-0.7, 0.7, size=ball.shape)
    random_rank, random_ap = reconstruction_scores(random, edges)
    assert random_rank > 400 and random_ap < 0.1
