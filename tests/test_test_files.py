"""Every module with behaviour of its own has a test file named after it.

The tests of ``geomstats_dp/<package>/<module>.py`` live in ``tests/<package>/test_<module>.py``
(a leading underscore dropped: ``testing/_noise.py`` -> ``tests/testing/test_noise.py``). A
module of a subpackage may keep its tests in the folder of its subpackage or of its top
package (``distributions/laplace/radial.py`` -> ``tests/laplace/test_radial.py`` or
``tests/distributions/test_radial.py``); a top-level module ``geomstats_dp/<module>.py`` in
``tests/test_<module>.py``; a package ``__init__.py`` that defines functions or classes of
its own in ``tests/<package>/test_<package>.py``. Suites that span modules (the conformance
harness, a property checked on every manifold family) keep their behaviour names besides.
Re-exports and modules holding only constants, exception classes or a plain record have no
behaviour of their own: they are listed in ``NO_BEHAVIOUR``, with the reason.
"""

import ast
from pathlib import Path

import pytest

import geomstats_dp

PACKAGE = Path(geomstats_dp.__file__).resolve().parent
TESTS = Path(__file__).resolve().parent

NO_BEHAVIOUR = {
    "privacy/_exceptions.py": "the exception and warning classes, raised and tested elsewhere",
    "optim/result.py": "a frozen dataclass of a run's outputs",
    "privacy/orders.py": "the constant grids of Renyi orders, used by every RDP test",
}


def _defines_behaviour(path):
    """Whether an ``__init__.py`` defines a function or a class (else it re-exports)."""
    tree = ast.parse(path.read_text())
    return any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) for node in tree.body)


def candidate_test_files(relative):
    """Where the tests of the module ``relative`` (a path under geomstats_dp) may live."""
    parts = relative.parts
    if parts[-1] == "__init__.py":
        folders, name = [parts[:-1]], parts[-2]
    else:
        folders = [parts[:-1], parts[-2:-1], parts[:1]] if len(parts) > 1 else [()]
        name = Path(parts[-1]).stem.lstrip("_")
    return [TESTS.joinpath(*folder, f"test_{name}.py") for folder in folders]


def modules_with_behaviour():
    """Every module of geomstats_dp that should have a test file, as paths under it."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.as_posix() in NO_BEHAVIOUR:
            continue
        if relative.name == "__init__.py" and not _defines_behaviour(path):
            continue
        yield relative


MODULES = list(modules_with_behaviour())


@pytest.mark.backend_independent
@pytest.mark.parametrize("relative", MODULES, ids=[module.as_posix() for module in MODULES])
def test_every_module_has_a_test_file(relative):
    candidates = candidate_test_files(relative)
    assert any(candidate.is_file() for candidate in candidates), (
        f"geomstats_dp/{relative.as_posix()} has behaviour but no test file: add "
        f"{candidates[0].relative_to(TESTS.parent)} (or list it in NO_BEHAVIOUR, with why)"
    )


@pytest.mark.backend_independent
def test_the_allow_list_names_existing_modules():
    """An allow-list entry whose module was removed or renamed must go too."""
    missing = [name for name in NO_BEHAVIOUR if not (PACKAGE / name).is_file()]
    assert not missing, missing
