"""Euclidean spaces and matrix spaces: the transport is the identity, and a draw is the
reshaped standard normals whatever the base point."""

import numpy as np
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.matrices import Matrices

from geomstats_dp.distributions.euclidean import EuclideanTransport
from geomstats_dp.distributions.registry import find_transport


def test_a_draw_is_the_reshaped_normals_at_every_base_point():
    space = Matrices(2, 3)
    transport = EuclideanTransport(space, space.metric)
    points = np.random.default_rng(0).standard_normal((4, 2, 3)) * 100
    draws = transport.sample(points, 5, np.random.default_rng(7))
    normals = np.random.default_rng(7).standard_normal((5, 4, 6))
    np.testing.assert_array_equal(draws, normals.reshape(5, 4, 2, 3))
    np.testing.assert_array_equal(transport.transport_back(points, draws), draws)
    np.testing.assert_array_equal(transport.to_coordinates(draws), normals)


def test_serves_euclidean_and_matrix_spaces():
    assert find_transport(Euclidean(3).metric) is EuclideanTransport
    assert find_transport(Matrices(2, 2).metric) is EuclideanTransport
