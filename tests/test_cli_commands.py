"""The spaces and point files of the geomstats-dp commands (``cli_commands``): every space
of the Python API by name, and errors naming the option or the file."""

import numpy as np
import pytest

from geomstats_dp.cli_commands import load_points, make_space

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize(
    ("name", "shape", "extra", "expected"),
    [("spd", (3, 3), {"metric": "log-euclidean"}, "SPDMatrices"),
     ("sphere", (3,), {}, "Hypersphere"), ("hyperboloid", (3,), {}, "Hyperboloid"),
     ("poincare", (2,), {}, "PoincareBall"), ("euclidean", (2,), {}, "Euclidean"),
     ("grassmannian", (4, 4), {"rank": 2}, "Grassmannian"), ("stiefel", (4, 2), {}, "Stiefel")],
)
def test_every_space_of_the_python_api(name, shape, extra, expected):
    space = make_space(name, shape, **extra)
    assert type(space).__name__ == expected
    assert tuple(space.shape) == shape


@pytest.mark.parametrize("metric", ["bures-wasserstein", "log-euclidean"])
def test_spd_metric_is_equipped(metric):
    expected = {"bures-wasserstein": "SPDBuresWassersteinMetric",
                "log-euclidean": "SPDLogEuclideanMetric"}[metric]
    assert type(make_space("spd", (2, 2), metric=metric).metric).__name__ == expected
    assert type(make_space("spd", (2, 2)).metric).__name__ == "SPDAffineMetric"


@pytest.mark.parametrize(("name", "shape", "extra", "match"), [
    ("torus", (2,), {}, "--space must be one of"),
    ("sphere", (3,), {"metric": "affine"}, "--metric is only for --space spd"),
    ("grassmannian", (4, 4), {}, "--rank is required"),
    ("sphere", (3,), {"rank": 1}, "--rank is required"),
    ("grassmannian", (3, 3), {"rank": 3}, "--rank must be < the matrix size 3, got 3"),
    ("spd", (2, 3), {}, "--space spd needs square matrices.*got \\[n, 2, 3\\]"),
    ("stiefel", (2, 4), {}, "k <= n"),
    ("sphere", (1,), {}, "at least 2 coordinates"),
    ("euclidean", (2, 2), {}, "--space euclidean needs points of shape \\[n, dim\\]"),
])
def test_bad_spaces_raise_naming_the_option(name, shape, extra, match):
    with pytest.raises(ValueError, match=match):
        make_space(name, shape, **extra)


def test_points_are_read_as_floats(tmp_path):
    np.save(tmp_path / "points.npy", np.arange(6).reshape(3, 2))
    points = load_points(tmp_path / "points.npy")
    assert points.dtype == np.float64
    np.testing.assert_array_equal(points, np.arange(6.0).reshape(3, 2))


@pytest.mark.parametrize(("content", "match"), [
    (None, "does not exist"),
    (b"garbage", "is not a readable .npy array"),
    (np.array([1j, 2j]), "must hold real numbers"),
    (np.array(["a"]), "must hold real numbers"),
    (np.zeros((0, 2)), "is empty"),
    (np.float64(1.0), "is empty"),
])
def test_bad_point_files_raise_naming_the_file(tmp_path, content, match):
    path = tmp_path / "points.npy"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        np.save(path, content)
    with pytest.raises(ValueError, match=f"points file .*points.npy.* {match}"):
        load_points(path)
