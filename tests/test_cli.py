"""The geomstats-dp command: account, frechet-mean and the demo."""

import re

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_numpy
from geomstats_dp.cli import main
from geomstats_dp.privacy import GaussianEvent, compose_epsilon
from tests.conftest import BACKEND


def _number(pattern, text):
    return float(re.search(pattern, text).group(1))


def test_account_calibrates_then_reports_the_same_epsilon(capsys):
    main(["account", "--epsilon", "0.8", "--delta", "1e-6", "--n-steps", "50",
          "--sampling-rate", "0.02"])
    z = _number(r"noise multiplier ([0-9.]+)", capsys.readouterr().out)
    event = GaussianEvent(z, 50, 0.02, "without_replacement")
    assert compose_epsilon([event], 1e-6) == pytest.approx(0.8, rel=1e-3)
    main(["account", "--noise-multiplier", str(z), "--delta", "1e-6", "--n-steps", "50",
          "--sampling-rate", "0.02"])
    assert _number(r"epsilon=([0-9.]+)", capsys.readouterr().out) == pytest.approx(0.8, rel=1e-3)


def test_frechet_mean_command_writes_a_point_on_the_sphere(tmp_path, capsys):
    sphere = Hypersphere(2)
    gs.random.seed(0)
    points = to_numpy(sphere.random_von_mises_fisher(kappa=20, n_samples=100))
    np.save(tmp_path / "points.npy", points)
    main(["frechet-mean", str(tmp_path / "points.npy"), "--space", "sphere",
          "--clip-norm", "1.0", "--seed", "0", "--output", str(tmp_path / "mean.npy")])
    mean = np.load(tmp_path / "mean.npy")
    assert np.isclose(np.linalg.norm(mean), 1.0)
    assert "spent 1" in capsys.readouterr().out


def test_bad_arguments_exit_with_a_message(capsys):
    with pytest.raises(SystemExit):
        main(["account", "--epsilon", "-1", "--n-steps", "5"])
    assert "expected a finite number > 0" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(BACKEND != "numpy", reason="make demo runs on the numpy backend")
def test_demo_releases_all_means_and_writes_the_plot(tmp_path, capsys):
    main(["demo", "--output", str(tmp_path)])
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.split()[:1] and
            line.split()[0] in ("all", "rock", "scissors", "paper", "ok")]
    assert len(rows) == 5
    for row in rows:
        assert float(row[2]) == pytest.approx(1.0, rel=1e-3)  # epsilon spent
        assert float(row[4]) < float(row[5])  # private error below the data spread
    assert (tmp_path / "emg_private_means.png").stat().st_size > 10_000
