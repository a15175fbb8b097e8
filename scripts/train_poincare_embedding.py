"""Train the 2-dimensional Poincare embedding of the WordNet mammals closure (shipped).

Nickel & Kiela's (2017) loss: for an edge (u, v) of the closure and negatives v'_1..v'_K
drawn uniformly among the synsets not linked to u,
    f = d(u, v) + log(exp(-d(u, v)) + sum_k exp(-d(u, v'_k))),
d the Poincare distance. The point optimised is the whole embedding, a point of the
n-fold product of PoincareBall(2); it is trained with this library's own loop,
``geomstats_dp.optim.minimize``, with a noiseless ``MiniBatch`` strategy (Riemannian SGD;
the hierarchy is public, nothing here is private) and Nickel & Kiela's retraction
x <- proj(x - eta (1 - |x|^2)^2 / 4 grad_E f), with a burn-in at a tenth of the step.

Writes ``geomstats_dp/datasets/data/wordnet_mammals_poincare.csv`` (name, x, y) and
prints the reconstruction mean rank and mean average precision. Run on the numpy backend::

    GEOMSTATS_BACKEND=numpy python scripts/train_poincare_embedding.py
"""

import argparse
import csv
import time

import numpy as np
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.nfold_manifold import NFoldManifold, NFoldMetric

from geomstats_dp.datasets.wordnet import (
    CLOSURE_FILE,
    EMBEDDING_FILE,
    closure_edges,
    poincare_distance,
    reconstruction_scores,
)
from geomstats_dp.optim import MiniBatch, PerSampleLoss, minimize

BOUNDARY = 1 - 1e-3  # points are kept inside the ball of this radius (hyperbolic 7.6)


def distance_gradient(u, v, alpha, beta, gamma):
    """Euclidean gradient of d(u, v) in u (Nickel & Kiela's closed form)."""
    root = np.sqrt(np.maximum(gamma**2 - 1, 1e-10))
    scale = 4 / (beta * root)
    coefficient = ((v**2).sum(-1) - 2 * (u * v).sum(-1) + 1) / alpha**2
    return scale[..., None] * (coefficient[..., None] * u - v / alpha[..., None])


class PoincareEmbeddingLoss(PerSampleLoss):
    """Nickel & Kiela's loss of one edge, in the embedding of all synsets.

    Data rows are edges (u, v) as floats; negatives are drawn by the loss's own generator.
    Gradients are dense [k, n, 2] Riemannian gradients on the product of Poincare balls.
    """

    def __init__(self, space, edges, n_nodes, n_negatives=10, seed=0):
        super().__init__(space)
        self.n_negatives = n_negatives
        self.rng = np.random.default_rng(seed)
        linked = np.zeros((n_nodes, n_nodes), dtype=bool)
        linked[edges[:, 0], edges[:, 1]] = linked[edges[:, 1], edges[:, 0]] = True
        np.fill_diagonal(linked, True)
        self.candidates = [np.flatnonzero(~row) for row in linked]

    def _targets(self, edges):
        u, v = edges[:, 0].astype(int), edges[:, 1].astype(int)
        negatives = np.stack([
            self.candidates[i][self.rng.integers(len(self.candidates[i]), size=self.n_negatives)]
            for i in u
        ])
        return u, np.concatenate([v[:, None], negatives], axis=1)

    def values(self, point, data):
        u, targets = self._targets(np.asarray(data))
        dist = poincare_distance(point[u][:, None], point[targets])[0]
        return dist[:, 0] + np.log(np.exp(-dist).sum(1))

    def gradients(self, point, data):
        u, targets = self._targets(np.asarray(data))
        k = len(u)
        pu, pt = point[u][:, None], point[targets]
        dist, alpha, beta, gamma = poincare_distance(pu, pt)
        weights = np.exp(-dist)
        coefficient = -weights / weights.sum(1, keepdims=True)
        coefficient[:, 0] += 1
        grad_u = (coefficient[..., None] * distance_gradient(pu, pt, alpha, beta, gamma)).sum(1)
        grad_t = coefficient[..., None] * distance_gradient(pt, pu, beta, alpha, gamma)
        grads = np.zeros((k,) + point.shape)
        rows = np.arange(k)
        np.add.at(grads, (rows, u), grad_u)
        np.add.at(grads, (np.repeat(rows, targets.shape[1]), targets.ravel()),
                  grad_t.reshape(-1, 2))
        conformal = (1 - (point**2).sum(-1)) ** 2 / 4
        return grads * conformal[None, :, None]


class PoincareBallsMetric(NFoldMetric):
    """geomstats' n-fold metric with the norm written for PoincareBall(2) factors (fast)."""

    def norm(self, vector, base_point=None):
        """sqrt(sum_j 4 |v_j|^2 / (1 - |x_j|^2)^2), shape=[...]."""
        conformal = 4 / (1 - (base_point**2).sum(-1)) ** 2
        return np.sqrt(np.einsum("...jc,...jc,j->...", vector, vector, conformal))


def retraction(tangent_vec, base_point):
    """x + v, pulled back inside the ball of radius BOUNDARY (Nickel & Kiela)."""
    point = base_point + tangent_vec
    norms = np.linalg.norm(point, axis=-1, keepdims=True)
    return np.where(norms > BOUNDARY, point / norms * BOUNDARY, point)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=400)
    parser.add_argument("--burn-in", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--step-size", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(EMBEDDING_FILE))
    args = parser.parse_args(argv)

    names, edges = closure_edges()
    n = len(names)
    space = NFoldManifold(PoincareBall(2), n, equip=False).equip_with_metric(PoincareBallsMetric)
    loss = PoincareEmbeddingLoss(space, edges, n, seed=args.seed)
    init = np.random.default_rng(args.seed).uniform(-1e-3, 1e-3, size=(n, 2))
    steps_per_epoch = int(np.ceil(len(edges) / args.batch_size))
    burn_in = args.burn_in * steps_per_epoch

    def step_size(t):
        return args.step_size / (10 if t < burn_in else 1)

    start = time.perf_counter()
    result = minimize(
        loss, edges.astype(float), MiniBatch(args.batch_size, 1e12, 0.0),
        args.epochs * steps_per_epoch, step_size, init, retraction=retraction,
        random_state=args.seed,
    )
    elapsed = time.perf_counter() - start
    embedding = np.asarray(result.point)
    mean_rank, mean_ap = reconstruction_scores(embedding, edges)
    print(f"{args.epochs} epochs ({result.n_steps} steps) in {elapsed:.0f} s: "
          f"mean rank {mean_rank:.2f}, MAP {mean_ap:.3f}")
    with open(args.output, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["synset", "x", "y"])
        for name, (x, y) in zip(names, embedding):
            writer.writerow([name, f"{x:.10f}", f"{y:.10f}"])
    print(f"wrote {args.output} (closure: {CLOSURE_FILE.name})")


if __name__ == "__main__":
    main()
