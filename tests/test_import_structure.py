"""The package's import structure: one-way arrows, no hidden circles, no private crossings.

Read from the source with ``ast`` (module-level imports are the graph's edges; an import
inside a function is listed on its own), and checked by importing every module in a
fresh interpreter.
"""

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "geomstats_dp"
# Modules still allowed to import a package module inside a function (each entry names
# what it imports lazily); empty: a new entry needs a reason, and a stale one fails.
IN_FUNCTION_LEFT = {}
# (importer, private module) pairs still allowed to cross into another package's privates
CROSSINGS_LEFT = set()
# modules that import an optional dependency at module level
OPTIONAL = {"geomstats_dp.federated.flower_deploy": "flwr"}


def _modules():
    """Module name -> source path, for every module of the package."""
    modules = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


class _Imports(ast.NodeVisitor):
    """The package modules a module imports, at module level and inside functions."""

    def __init__(self, name, is_package):
        self.name, self.is_package = name, is_package
        self.module_level, self.in_function, self.depth = set(), set(), 0

    def _visit_function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function

    def _add(self, target):
        if target == PACKAGE or target.startswith(PACKAGE + "."):
            (self.in_function if self.depth else self.module_level).add(target)

    def visit_Import(self, node):
        for alias in node.names:
            self._add(alias.name)

    def visit_ImportFrom(self, node):
        base = node.module or ""
        if node.level:
            parts = self.name.split(".")[:len(self.name.split(".")) - node.level
                                         + self.is_package]
            base = ".".join([*parts, base] if base else parts)
        for alias in node.names:
            child = f"{base}.{alias.name}"
            self._add(child if child in MODULES else base)


def _imports():
    """Module -> (its module-level package imports, its in-function ones)."""
    found = {}
    for name, path in MODULES.items():
        visitor = _Imports(name, path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(), filename=str(path)))
        found[name] = (visitor.module_level, visitor.in_function)
    return found


IMPORTS = _imports()


def _cycle(graph):
    """One cycle of ``graph`` (a list of modules), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for child in sorted(graph.get(node, ())):
            if state.get(child) == "open":
                return [*stack[stack.index(child):], child]
            if child not in state:
                found = visit(child)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_planted_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "d": {"a", "c"}}) is None


def test_the_module_import_graph_has_no_cycle():
    graph = {name: {target for target in module_level if target in MODULES}
             for name, (module_level, _) in IMPORTS.items()}
    assert _cycle(graph) is None


def test_no_function_imports_a_package_module():
    offending = {name: in_function - IN_FUNCTION_LEFT.get(name, set())
                 for name, (_, in_function) in IMPORTS.items()}
    assert {name: sorted(found) for name, found in offending.items() if found} == {}


def test_the_allow_list_of_in_function_imports_holds_only_what_is_left():
    """An entry whose lazy import is gone must leave the list (it cannot grow back)."""
    stale = {name: sorted(targets - IMPORTS[name][1])
             for name, targets in IN_FUNCTION_LEFT.items()}
    assert {name: targets for name, targets in stale.items() if targets} == {}


def _private_owner(target):
    """The package whose private module ``target`` is (None for a public module)."""
    parts = target.split(".")
    for index, part in enumerate(parts[1:], 1):
        if part.startswith("_"):
            return ".".join(parts[:index])
    return None


def test_no_module_imports_another_packages_private_module():
    crossings = set()
    for name, (module_level, in_function) in IMPORTS.items():
        for target in module_level | in_function:
            owner = _private_owner(target)
            if owner not in (None, PACKAGE) and not (name + ".").startswith(owner + "."):
                crossings.add((name, target))
    assert crossings - CROSSINGS_LEFT == set()
    assert CROSSINGS_LEFT <= crossings  # the list holds only what is left


def test_the_private_owner_of_a_module():
    assert _private_owner("geomstats_dp.learning._data") == "geomstats_dp.learning"
    assert _private_owner("geomstats_dp._backend") == PACKAGE  # the package's own boundary
    assert _private_owner("geomstats_dp.learning.mechanisms.base") is None


@pytest.mark.slow
@pytest.mark.backend_independent
def test_every_module_imports_in_a_fresh_interpreter():
    names = [name for name in MODULES
             if name not in OPTIONAL or _importable(OPTIONAL[name])]
    script = ("import importlib, sys\n"
              f"for name in {names!r}:\n"
              "    importlib.import_module(name)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]


def _importable(name):
    return importlib.util.find_spec(name) is not None
