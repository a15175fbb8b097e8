"""Spaces and base points for the tangent-Gaussian tests.

Every family with a closed-form transport, in a small dimension (fast statistics), with
base points at the reference point, near it, at random, and at the hard places of each
family: an ill-conditioned SPD matrix (condition number 1e4), points at hyperbolic
distance 5 on the hyperboloid and the ball, the sphere near -e1 (w_0 = -1 + 1e-6) and at
-e1, Stiefel frames with negative diagonal (sign handling of the QR) and frames and
subspaces orthogonal to the reference. Points are numpy float64; tests convert them.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.grassmannian import Grassmannian
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.matrices import Matrices
from geomstats.geometry.poincare_ball import PoincareBall
from geomstats.geometry.spd_matrices import (
    SPDAffineMetric,
    SPDBuresWassersteinMetric,
    SPDEuclideanMetric,
    SPDLogEuclideanMetric,
    SPDMatrices,
)
from geomstats.geometry.stiefel import Stiefel

NEAR = 1e-6
FAR_DISTANCE = 5.0


def _rng(*keys):
    return np.random.default_rng([2024, *keys])


def _unit(vec):
    return vec / np.linalg.norm(vec)


def _orthogonal(size, seed):
    return np.linalg.qr(_rng(seed).normal(size=(size, size)))[0]


def _spd_points(size):
    rotation = _orthogonal(size, 1)
    return {
        "reference": np.eye(size),
        "near_reference": np.eye(size) + NEAR * (rotation + rotation.T),
        "random": rotation @ np.diag(np.exp(_rng(2).uniform(-1.5, 1.5, size))) @ rotation.T,
        "ill_conditioned": rotation @ np.diag(np.logspace(-2, 2, size)) @ rotation.T,
    }


def _sphere_points(ambient):
    tail = _unit(_rng(3).normal(size=ambient - 1))
    antipode = -np.eye(ambient)[0]
    w_0 = -1 + NEAR
    return {
        "reference": np.eye(ambient)[0],
        "near_reference": _unit(np.eye(ambient)[0] + NEAR * np.r_[0.0, tail]),
        "random": _unit(_rng(4).normal(size=ambient)),
        "equator": np.r_[0.0, tail],
        "near_antipode": np.r_[w_0, math.sqrt(1 - w_0**2) * tail],
        "antipode": antipode,
    }


def _hyperboloid_point(distance, direction):
    return np.r_[math.cosh(distance), math.sinh(distance) * direction]


def _hyperboloid_points(ambient):
    direction = _unit(_rng(5).normal(size=ambient - 1))
    return {
        "reference": np.eye(ambient)[0],
        "near_reference": _hyperboloid_point(NEAR, direction),
        "random": _hyperboloid_point(1.2, _unit(_rng(6).normal(size=ambient - 1))),
        "far": _hyperboloid_point(FAR_DISTANCE, direction),
    }


def _ball_points(size):
    direction = _unit(_rng(7).normal(size=size))
    # the distance from the origin is 2 artanh |w|
    return {
        "reference": np.zeros(size),
        "near_reference": NEAR * direction,
        "random": 0.6 * _unit(_rng(8).normal(size=size)),
        "far": math.tanh(FAR_DISTANCE / 2) * direction,
    }


def _stiefel_points(size, rank):
    eye = np.eye(size, rank)
    perturbed = np.linalg.qr(eye + NEAR * _rng(9).normal(size=(size, rank)))[0]
    complement = np.zeros((size, rank))
    complement[rank : 2 * rank] = _orthogonal(rank, 10)
    return {
        "reference": eye,
        "near_reference": perturbed * np.sign(np.diag(perturbed)),
        "random": np.linalg.qr(_rng(11).normal(size=(size, rank)))[0],
        "negated_reference": -eye,
        "orthogonal_to_reference": complement,
    }


def _grassmann_points(size, rank):
    return {
        name: frame @ frame.T
        for name, frame in _stiefel_points(size, rank).items()
        if name != "negated_reference"
    }


def _spd_space(metric_class):
    def make():
        space = SPDMatrices(3, equip=False)
        return space.equip_with_metric(metric_class)

    return make


FAMILIES = {
    "euclidean": (lambda: Euclidean(4), {"reference": np.zeros(4), "random": np.arange(4.0)}),
    "matrices": (lambda: Matrices(2, 3), {"random": np.arange(6.0).reshape(2, 3)}),
    "spd_affine": (_spd_space(SPDAffineMetric), _spd_points(3)),
    "spd_bures_wasserstein": (_spd_space(SPDBuresWassersteinMetric), _spd_points(3)),
    "spd_log_euclidean": (_spd_space(SPDLogEuclideanMetric), _spd_points(3)),
    "spd_euclidean": (_spd_space(SPDEuclideanMetric), _spd_points(3)),
    "hypersphere": (lambda: Hypersphere(4), _sphere_points(5)),
    "hyperboloid": (lambda: Hyperboloid(4), _hyperboloid_points(5)),
    "poincare_ball": (lambda: PoincareBall(4), _ball_points(4)),
    "stiefel": (lambda: Stiefel(5, 2), _stiefel_points(5, 2)),
    "grassmannian": (lambda: Grassmannian(5, 2), _grassmann_points(5, 2)),
}

LARGE_FAMILIES = {
    "spd_affine": (lambda: SPDMatrices(12), _spd_points(12)["ill_conditioned"]),
    "hypersphere": (lambda: Hypersphere(299), _sphere_points(300)["near_antipode"]),
    "hyperboloid": (lambda: Hyperboloid(299), _hyperboloid_points(300)["far"]),
    "poincare_ball": (lambda: PoincareBall(300), _ball_points(300)["far"]),
    "stiefel": (lambda: Stiefel(60, 5), _stiefel_points(60, 5)["random"]),
    "grassmannian": (lambda: Grassmannian(60, 5), _grassmann_points(60, 5)["random"]),
}

CASES = [(family, kind) for family, (_, points) in FAMILIES.items() for kind in points]


def make_case(family, kind=None):
    """Namespace with the family's space (built on the active backend) and base points."""
    make_space, points = FAMILIES[family]
    return SimpleNamespace(
        family=family,
        space=make_space(),
        points=points,
        base_point=points[kind] if kind else None,
    )


@pytest.fixture(params=CASES, ids=[f"{family}-{kind}" for family, kind in CASES])
def case(request):
    """One (family, base point) pair."""
    return make_case(*request.param)


@pytest.fixture(params=sorted(FAMILIES))
def family_case(request):
    """One family with all its base points."""
    return make_case(request.param)


@pytest.fixture(params=sorted(LARGE_FAMILIES))
def large_case(request):
    """A family in a larger dimension, at a hard base point."""
    make_space, point = LARGE_FAMILIES[request.param]
    return SimpleNamespace(family=request.param, space=make_space(), base_point=point)
