"""PriRFed's failure record (withheld on request) and a deployed release read back."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, engine
from geomstats_dp.federated.engine import run_local

SPACE = Hypersphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
KWARGS = {"epsilon": 1.0, "n_rounds": 3, "n_sampled": 2, "local_steps": 2,
          "local_method": "rgd", "clip_norm": 1.0, "random_state": 3}


def agents(sizes=(10, 15, 20), seed=0):
    rng = np.random.default_rng(seed)
    return [to_numpy(SPACE.projection(to_backend(NORTH + 0.3 * rng.normal(size=(n, 3)))))
            for n in sizes]


def fit_with_faults(monkeypatch, faults, **kwargs):
    monkeypatch.setattr(engine, "run_local",
                        lambda run, datasets: run_local(run, datasets, faults))
    return PriRFed(SPACE, **dict(KWARGS, **kwargs)).fit(agents())


def test_withheld_failure_record_leaves_nothing_but_the_release(monkeypatch, capsys):
    sampled = PriRFed(SPACE, **KWARGS).run_spec([10, 15, 20]).sample_agents()
    faults = {(0, sampled[0][0]): "raise", (2, sampled[2][1]): "raise"}
    runs = {}
    for label, fault_map in (("clean", {}), ("faulty", faults)):
        for record in (True, False):
            est = fit_with_faults(monkeypatch, fault_map, record_failures=record, verbose=True)
            runs[label, record] = est, capsys.readouterr()
    recorded = runs["faulty", True][0]
    assert [r["failed"] for r in recorded.history_] == [[sampled[0][0]], [], [sampled[2][1]]]
    assert "1 of 2 replies" in runs["faulty", True][1].out
    clean, clean_output = runs["clean", False]
    faulty, faulty_output = runs["faulty", False]
    for est in (clean, faulty):
        assert [sorted(r) for r in est.history_] == [["point", "sampled"]] * 3
        assert [r["sampled"] for r in est.history_] == sampled
    # what a reader sees besides the release is the same with and without failures
    assert faulty_output == clean_output
    assert "replies" not in faulty_output.out
    # the release is the one the failures produced (withholding the record changes nothing)
    np.testing.assert_array_equal(to_numpy(faulty.estimate_), to_numpy(recorded.estimate_))
    assert not np.allclose(to_numpy(faulty.estimate_), to_numpy(clean.estimate_))


def test_record_failures_must_be_a_bool():
    with pytest.raises(TypeError, match="record_failures"):
        PriRFed(SPACE, record_failures="no", **KWARGS).fit(agents())


def deployed(tmp_path, space=SPACE):
    estimator = PriRFed(space, **KWARGS)
    estimator.deployment_config([10, 15, 20], tmp_path / "release.npy")
    return estimator


def test_load_release_reads_a_point_of_the_space(tmp_path):
    point = np.array([0.6, 0.0, 0.8])
    np.save(tmp_path / "release.npy", point)
    estimator = deployed(tmp_path).load_release(tmp_path / "release.npy")
    np.testing.assert_array_equal(to_numpy(estimator.estimate_), point)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (np.array([0.0, np.nan, 1.0]), "non-finite value at index"),
        (np.array([0.0, 0.0, 0.0, 1.0]), r"space's shape \(3,\), got \(4,\)"),
        (np.array([[0.0, 0.0, 1.0]]), r"space's shape \(3,\), got \(1, 3\)"),
        (np.array([0.0, 0.0, 1.1]), "not on Hypersphere"),
        (np.array(["0", "0", "1"]), "must be a real array"),
        (np.array([{"a": 1}], dtype=object), "is not a .npy array"),
    ],
)
def test_load_release_refuses_a_file_that_is_not_a_point(tmp_path, content, message):
    path = tmp_path / "release.npy"
    np.save(path, content, allow_pickle=True)
    estimator = deployed(tmp_path)
    with pytest.raises(ValueError, match=message):
        estimator.load_release(path)
    assert not hasattr(estimator, "estimate_")


def test_load_release_refuses_text_and_archives(tmp_path):
    estimator = deployed(tmp_path)
    (tmp_path / "notes.npy").write_text("0 0 1")
    with pytest.raises(ValueError, match="is not a .npy array"):
        estimator.load_release(tmp_path / "notes.npy")
    np.savez(tmp_path / "release.npz", point=NORTH)
    with pytest.raises(TypeError, match="holds an archive"):
        estimator.load_release(tmp_path / "release.npz")


def test_load_release_of_a_missing_file_says_where_it_comes_from(tmp_path):
    estimator = deployed(tmp_path)
    with pytest.raises(FileNotFoundError, match="no release at .*writes it to the run "
                                                "configuration's 'out'"):
        estimator.load_release(tmp_path / "missing.npy")
