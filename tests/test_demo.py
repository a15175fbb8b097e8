"""The demo's releases, on small synthetic covariances in place of the EMG data: one
release per gesture and one for all, each charged to its own budget, at a huge epsilon
close to the exact mean, and the plot written. The demo on the EMG data itself runs in
tests/test_cli.py (``geomstats-dp demo``)."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp import demo
from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.datasets import EMG_GESTURES
from tests.conftest import shifted

SIZES = (12, 15, 9, 14)  # records per gesture


def _small_covariances():
    gs_space = SPDMatrices(8)
    rng = np.random.default_rng(shifted(0))
    tangents = 0.2 * rng.standard_normal((sum(SIZES), 8, 8))
    tangents = (tangents + np.swapaxes(tangents, 1, 2)) / 2
    points = gs_space.metric.exp(to_backend(tangents), to_backend(np.eye(8)))
    labels = np.repeat(np.arange(len(SIZES)), SIZES)
    return points, labels


@pytest.mark.slow
def test_each_group_is_released_on_its_own_budget(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(demo, "load_emg_covariances", _small_covariances)
    rows = demo.run_demo(epsilon=1e6, clip_norm=5.0, method="rgd", output=str(tmp_path))
    assert [row["data"] for row in rows] == ["all", *EMG_GESTURES]
    assert [row["n"] for row in rows] == [sum(SIZES), *SIZES]
    for row in rows:
        assert row["epsilon_spent"] == pytest.approx(1e6, rel=1e-6)  # its own budget
        assert row["distance"] < 0.05 * row["spread"]  # noise negligible at epsilon 1e6
        np.testing.assert_allclose(row["private"], to_numpy(row["private"]).T)
    assert (tmp_path / "emg_private_means.png").stat().st_size > 10_000
    assert "plot written to" in capsys.readouterr().out
