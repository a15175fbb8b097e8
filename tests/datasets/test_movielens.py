"""MovieLens-100K from the recbole wheel: parsing, the split, the error without recbole."""

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

from geomstats_dp.datasets import load_movielens_100k, split_ratings
from geomstats_dp.datasets.movielens import read_inter

HEADER = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
ROWS = [(7, 30, 4), (3, 10, 5), (7, 10, 1), (12, 20, 2.5)]


def _fake_recbole(tmp_path, rows=ROWS, header=HEADER):
    """A folder laid out like recbole's package, holding a small generated .inter file."""
    folder = tmp_path / "recbole" / "dataset_example" / "ml-100k"
    folder.mkdir(parents=True)
    lines = [f"{u}\t{i}\t{r}\t88125094{k}\n" for k, (u, i, r) in enumerate(rows)]
    (folder / "ml-100k.inter").write_text(header + "".join(lines))
    return SimpleNamespace(submodule_search_locations=[str(tmp_path / "recbole")])


@pytest.mark.backend_independent
def test_parses_recbole_format(tmp_path, monkeypatch):
    spec = _fake_recbole(tmp_path)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    ratings, users, items = load_movielens_100k(return_ids=True)
    np.testing.assert_array_equal(users, [3, 7, 12])
    np.testing.assert_array_equal(items, [10, 20, 30])
    expected = np.array([[5, np.nan, np.nan], [1, np.nan, 4], [np.nan, 2.5, np.nan]])
    np.testing.assert_array_equal(ratings, expected)


@pytest.mark.backend_independent
def test_bad_files(tmp_path):
    spec = _fake_recbole(tmp_path / "a", header="user\titem\trating\n")
    with pytest.raises(ValueError, match="header must start with"):
        read_inter(spec.submodule_search_locations[0] + "/dataset_example/ml-100k/ml-100k.inter")
    spec = _fake_recbole(tmp_path / "b", rows=ROWS + [(7, 30, 2)])
    with pytest.raises(ValueError, match="rated more than once"):
        read_inter(spec.submodule_search_locations[0] + "/dataset_example/ml-100k/ml-100k.inter")


@pytest.mark.backend_independent
def test_clear_error_without_recbole(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"pip install --no-deps recbole==1\.2\.1"):
        load_movielens_100k()


@pytest.mark.backend_independent
def test_split_is_seeded_disjoint_and_complete():
    ratings = np.where(np.random.default_rng(0).random((50, 40)) < 0.3, 3.0, np.nan)
    train, test = split_ratings(ratings, test_size=0.25, random_state=1)
    again, _ = split_ratings(ratings, test_size=0.25, random_state=1)
    np.testing.assert_array_equal(train, again)
    observed = ~np.isnan(ratings)
    in_train, in_test = ~np.isnan(train), ~np.isnan(test)
    assert not (in_train & in_test).any()
    np.testing.assert_array_equal(in_train | in_test, observed)
    # Binomial(n_observed, 0.25): within 4 standard deviations
    n_obs = observed.sum()
    assert abs(in_test.sum() - 0.25 * n_obs) < 4 * np.sqrt(n_obs * 0.25 * 0.75)
    with pytest.raises(ValueError, match="test_size must lie in"):
        split_ratings(ratings, test_size=1.5)
    with pytest.raises(ValueError, match="ratings must have shape"):
        split_ratings(ratings[0])


@pytest.mark.backend_independent
@pytest.mark.skipif(importlib.util.find_spec("recbole") is None, reason="recbole absent")
def test_real_file_shape():
    ratings = load_movielens_100k()
    assert ratings.shape == (943, 1682)
    observed = ratings[~np.isnan(ratings)]
    assert observed.size == 100_000
    assert set(np.unique(observed)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    # every user rated at least 20 movies (GroupLens' selection), every movie was rated
    assert (~np.isnan(ratings)).sum(axis=1).min() >= 20
    assert (~np.isnan(ratings)).sum(axis=0).min() >= 1
