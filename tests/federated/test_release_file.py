"""A deployed run's release file read back: the saved point, or an error naming the path
and what was expected for a missing, malformed, wrong-shaped or off-space file."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.federated.release_file import read_release

SPACE = Hypersphere(2)


@pytest.mark.backend_independent
def test_the_saved_point_is_read_back(tmp_path):
    point = np.array([0.0, 0.6, 0.8])
    np.save(tmp_path / "release.npy", point)
    read = read_release(SPACE, tmp_path / "release.npy")
    assert isinstance(read, np.ndarray) and read.dtype == np.float64
    np.testing.assert_array_equal(read, point)


@pytest.mark.backend_independent
@pytest.mark.parametrize(("content", "error", "match"), [
    (None, FileNotFoundError, "no release at .*is the run finished"),
    (b"not an array", ValueError, "is not a .npy array"),
    (np.array(["a", "b", "c"]), ValueError, "must be a real array, got <U1"),
    (np.array([0.0, 1.0]), ValueError, r"the space's shape \(3,\), got \(2,\)"),
    (np.array([0.0, np.nan, 1.0]), ValueError, "the release"),
    (np.array([0.0, 2.0, 0.0]), ValueError, "the release"),
])
def test_a_wrong_file_raises_naming_the_path(tmp_path, content, error, match):
    path = tmp_path / "release.npy"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        np.save(path, content)
    with pytest.raises(error, match=match) as raised:
        read_release(SPACE, path)
    assert str(raised.value).startswith("path")


@pytest.mark.backend_independent
def test_an_archive_is_refused(tmp_path):
    path = tmp_path / "release.npz"
    np.savez(path, point=np.array([0.0, 0.0, 1.0]))
    with pytest.raises(TypeError, match="holds an archive"):
        read_release(SPACE, path)
