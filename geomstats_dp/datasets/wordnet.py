"""WordNet mammals (shipped): the hypernymy closure, its features and its embedding.

The transitive closure of hypernymy on the mammal.n.01 subtree of WordNet 3.0, built as
Nickel & Kiela (2017) did (1,181 synsets, 6,541 directed edges child -> ancestor; see
``scripts/build_wordnet_mammals.py``), ships as ``data/wordnet_mammals_closure.tsv`` under
WordNet's licence (``data/WORDNET_LICENSE``). The 2-dimensional Poincare embedding of the
closure (Nickel & Kiela's loss, trained non-privately with this library's Riemannian SGD:
``scripts/train_poincare_embedding.py``) ships as ``data/wordnet_mammals_poincare.csv``.
"""

import csv
import functools
from pathlib import Path

import numpy as np
from scipy.linalg import eigh

from geomstats_dp._backend import to_backend
from geomstats_dp._validation import check_positive_int

DATA = Path(__file__).resolve().parent / "data"
CLOSURE_FILE = DATA / "wordnet_mammals_closure.tsv"
EMBEDDING_FILE = DATA / "wordnet_mammals_poincare.csv"


@functools.lru_cache(maxsize=1)
def _read_closure():
    pairs = [line.split("\t") for line in CLOSURE_FILE.read_text().splitlines()]
    names = np.array(sorted({name for pair in pairs for name in pair}))
    index = {name: i for i, name in enumerate(names)}
    edges = np.array([[index[child], index[parent]] for child, parent in pairs], dtype=np.int64)
    return names, edges


def closure_edges():
    """The closure as integer edges.

    Returns
    -------
    names : numpy.ndarray of str, shape=[n_nodes]
        Synset names ("horse.n.01"), sorted.
    edges : numpy.ndarray of int, shape=[n_edges, 2]
        (child, ancestor) index pairs into ``names``.
    """
    names, edges = _read_closure()
    return names.copy(), edges.copy()


def laplacian_eigenmap(edges, n_nodes, n_components=3):
    """Laplacian eigenmap of the symmetric adjacency of a connected graph.

    The generalised eigenvectors L f = lambda D f of the ``n_components`` smallest non-zero
    eigenvalues (L = D - A), each signed so that its entry of largest magnitude is positive.

    Parameters
    ----------
    edges : numpy.ndarray of int, shape=[n_edges, 2]
    n_nodes : int
    n_components : int

    Returns
    -------
    features : numpy.ndarray, shape=[n_nodes, n_components]
    """
    n_components = check_positive_int(n_components, "n_components")
    adjacency = np.zeros((n_nodes, n_nodes))
    adjacency[edges[:, 0], edges[:, 1]] = adjacency[edges[:, 1], edges[:, 0]] = 1.0
    degree = np.diag(adjacency.sum(axis=1))
    _, vectors = eigh(degree - adjacency, degree, subset_by_index=[1, n_components])
    largest = np.abs(vectors).argmax(axis=0)
    return vectors * np.sign(vectors[largest, np.arange(n_components)])


def poincare_distance(u, v):
    """Poincare-ball distances between u and v (broadcast), with their pieces.

    Returns
    -------
    dist, alpha, beta, gamma : numpy.ndarray
        d(u, v) = arccosh(gamma), gamma = 1 + 2 |u - v|^2 / (alpha beta),
        alpha = 1 - |u|^2, beta = 1 - |v|^2.
    """
    alpha = 1 - (u**2).sum(-1)
    beta = 1 - (v**2).sum(-1)
    gamma = 1 + 2 * ((u - v) ** 2).sum(-1) / (alpha * beta)
    return np.arccosh(np.maximum(gamma, 1.0)), alpha, beta, gamma


def reconstruction_scores(embedding, edges):
    """Mean rank and mean average precision of a Poincare-ball embedding of a graph.

    Nickel & Kiela's (2017) reconstruction, with the closure's edges taken in both
    directions: for every node u and neighbour v, the rank of v is one plus the number of
    non-neighbours of u closer to u than v; the average precision of u ranks all other
    nodes by their distance to u; both are averaged (ranks over edges, precisions over
    nodes).

    Parameters
    ----------
    embedding : numpy.ndarray, shape=[n_nodes, dim]
        Points of the open unit ball.
    edges : numpy.ndarray of int, shape=[n_edges, 2]

    Returns
    -------
    mean_rank, mean_average_precision : float
    """
    embedding = np.asarray(embedding, dtype=np.float64)
    n_nodes = len(embedding)
    linked = np.zeros((n_nodes, n_nodes), dtype=bool)
    linked[edges[:, 0], edges[:, 1]] = linked[edges[:, 1], edges[:, 0]] = True
    np.fill_diagonal(linked, False)
    ranks, precisions = [], []
    for node in range(n_nodes):
        positives = np.flatnonzero(linked[node])
        if positives.size == 0:
            continue
        dist = poincare_distance(embedding[node], embedding)[0]
        others = ~linked[node]
        others[node] = False
        negatives = np.sort(dist[others])
        ranks.extend(np.searchsorted(negatives, dist[positives]) + 1)
        ordered = np.sort(dist[positives])
        hits = np.arange(1, len(ordered) + 1)
        precisions.append(np.mean(hits / (hits + np.searchsorted(negatives, ordered))))
    return float(np.mean(ranks)), float(np.mean(precisions))


def poincare_to_hyperboloid(points):
    """Poincare-ball coordinates [..., d] to the hyperboloid's extrinsic ones [..., d + 1]."""
    points = np.asarray(points, dtype=np.float64)
    spatial = 2 * points / (1 - (points**2).sum(axis=-1, keepdims=True))
    # x0 from the spatial part: -x0^2 + |x|^2 = -1 to rounding, also near the boundary
    return np.concatenate([np.sqrt(1 + (spatial**2).sum(axis=-1, keepdims=True)), spatial],
                          axis=-1)


def load_wordnet_mammals():
    """Load the WordNet mammals: features, hyperbolic embeddings and synset names.

    Returns
    -------
    features : array-like, shape=[1181, 3]
        Backend array: the Laplacian eigenmap (r = 3) of the closure's symmetric
        adjacency, each column standardised (mean 0, standard deviation 1).
    embeddings : array-like, shape=[1181, 3]
        Backend array of points on geomstats' ``Hyperboloid(2)`` (extrinsic coordinates):
        the shipped 2-dimensional Poincare embedding of the closure.
    names : numpy.ndarray of str, shape=[1181]
        WordNet synset names, e.g. "horse.n.01", sorted.
    """
    names, edges = closure_edges()
    with open(EMBEDDING_FILE, newline="") as file:
        rows = {row["synset"]: (float(row["x"]), float(row["y"])) for row in csv.DictReader(file)}
    ball = np.array([rows[name] for name in names])
    features = laplacian_eigenmap(edges, len(names))
    features = (features - features.mean(axis=0)) / features.std(axis=0)
    return to_backend(features), to_backend(poincare_to_hyperboloid(ball)), names
