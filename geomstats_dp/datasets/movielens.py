"""MovieLens-100K, read from the recbole 1.2.1 wheel without importing recbole.

recbole ships GroupLens' MovieLens-100K as ``recbole/dataset_example/ml-100k/ml-100k.inter``:
tab-separated, one header line (``user_id:token item_id:token rating:float
timestamp:float``), 100,000 ratings in 1..5 by 943 users of 1,682 movies. Its licence
forbids redistribution, so nothing of it is in this repository; recbole's own
dependencies pin an old ray, so it is installed with ``pip install --no-deps
recbole==1.2.1`` (the Makefile does), and importing it would pull torch and more: the
file is located with ``importlib.util.find_spec`` only.
"""

import importlib.util
from pathlib import Path

import numpy as np

from geomstats_dp._backend import get_rng
from geomstats_dp._validation import check_probability

INSTALL_HINT = "pip install --no-deps recbole==1.2.1"
INTER_FILE = ("dataset_example", "ml-100k", "ml-100k.inter")
COLUMNS = ("user_id:token", "item_id:token", "rating:float")


def _inter_path():
    """Path of ``ml-100k.inter`` inside the installed recbole package."""
    spec = importlib.util.find_spec("recbole")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"MovieLens-100K is read from the recbole package, which is not installed: "
            f"{INSTALL_HINT}"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*INTER_FILE)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the recbole install: {INSTALL_HINT}")
    return path


def read_inter(path):
    """Parse a recbole ``.inter`` file into a users x items rating matrix.

    Parameters
    ----------
    path : str or Path
        Tab-separated, header ``user_id:token item_id:token rating:float ...``.

    Returns
    -------
    ratings : numpy.ndarray, shape=[n_users, n_items]
        Rows are users, columns items, both in increasing order of their ids; NaN where
        a user did not rate an item.
    user_ids, item_ids : numpy.ndarray, shape=[n_users], [n_items]
        The ids of the rows and columns.
    """
    with open(path, encoding="utf-8") as stream:
        header = tuple(stream.readline().rstrip("\r\n").split("\t"))
    if header[:3] != COLUMNS:
        raise ValueError(f"{path}: header must start with {COLUMNS}, got {header}")
    table = np.loadtxt(path, delimiter="\t", skiprows=1, usecols=(0, 1, 2), ndmin=2,
                       dtype=str)
    user_ids, users = np.unique(table[:, 0].astype(np.int64), return_inverse=True)
    item_ids, items = np.unique(table[:, 1].astype(np.int64), return_inverse=True)
    ratings = np.full((len(user_ids), len(item_ids)), np.nan)
    cells = users * len(item_ids) + items
    if len(np.unique(cells)) != len(cells):
        raise ValueError(f"{path}: a (user, item) pair is rated more than once")
    ratings.flat[cells] = table[:, 2].astype(np.float64)
    return ratings, user_ids, item_ids


def load_movielens_100k(return_ids=False):
    """MovieLens-100K as a users x items rating matrix with NaN for missing entries.

    Parameters
    ----------
    return_ids : bool
        Also return the user and item ids of the rows and columns.

    Returns
    -------
    ratings : numpy.ndarray, shape=[943, 1682]
        Ratings in {1, ..., 5}; 100,000 entries are finite, the rest NaN.
    user_ids, item_ids : numpy.ndarray, shape=[943], [1682]
        Only with ``return_ids=True``.

    Raises
    ------
    ImportError
        recbole is not installed (``pip install --no-deps recbole==1.2.1``).
    """
    ratings, user_ids, item_ids = read_inter(_inter_path())
    return (ratings, user_ids, item_ids) if return_ids else ratings


def split_ratings(ratings, test_size=0.2, random_state=0):
    """Seeded split of the observed entries of a rating matrix into train and test.

    Every observed entry goes to the test matrix with probability ``test_size``,
    independently (a Bernoulli mask from ``random_state``), so each user keeps most of
    their ratings in the training matrix and a user's held-out ratings are predicted
    from their own training ratings.

    Parameters
    ----------
    ratings : array-like, shape=[n_users, n_items]
        NaN for missing entries.
    test_size : float
        In (0, 1).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    train, test : numpy.ndarray, shape=[n_users, n_items]
        Disjoint: each observed entry is finite in exactly one of them, NaN in the other.
    """
    check_probability(test_size, "test_size")
    ratings = np.asarray(ratings, dtype=np.float64)
    if ratings.ndim != 2:
        raise ValueError(f"ratings must have shape [n_users, n_items], got {ratings.shape}")
    held_out = get_rng(random_state).random(ratings.shape) < test_size
    observed = ~np.isnan(ratings)
    train = np.where(observed & ~held_out, ratings, np.nan)
    test = np.where(observed & held_out, ratings, np.nan)
    return train, test
