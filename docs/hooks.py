"""mkdocs hooks: pages that follow the repository instead of a hand-kept list.

- API reference: one page per public subpackage of ``geomstats_dp`` (``::: geomstats_dp.X``,
  members taken from its ``__all__``), so a subpackage added later gets its page.
- Tutorials: every ``tutorials/*.ipynb``, rendered by mkdocs-jupyter with stored outputs.
- Benchmarks: every ``docs/benchmarks/*.md``, and the PNGs of ``benchmarks/results/`` so
  that those pages can show them (``![...](results/name.png)``).
- User guide: any top-level ``docs/*.md`` that ``mkdocs.yml``'s nav does not name.
- Alt text: a notebook cell's metadata ``"alt"`` (one text per image output) becomes the
  alt text of its figures (nbconvert's template writes none and warns).
"""

import copy
import html
import importlib
import pkgutil
from pathlib import Path

import mkdocs.plugins
import mkdocs_jupyter.nbconvert2
from mkdocs.structure.files import File
from nbconvert.exporters.html import HTMLExporter

import geomstats_dp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TUTORIALS = "tutorials"
RESULTS = "benchmarks/results"


def _subpackages():
    """Names of the public subpackages of geomstats_dp, sorted."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules(geomstats_dp.__path__)
        if info.ispkg and not info.name.startswith("_")
    )


def _api_page(name):
    return f"api/{name}.md"


def _api_markdown(name):
    """``::: geomstats_dp.<name>``, plus the public names that a submodule of the same name
    shadows (mkdocstrings would show the submodule, not the name, e.g. ``privacy.audit``)."""
    package = importlib.import_module(f"geomstats_dp.{name}")
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    blocks = [f"# geomstats_dp.{name}", f"::: geomstats_dp.{name}"]
    for public in getattr(package, "__all__", []):
        value = getattr(package, public)
        if public in submodules and hasattr(value, "__qualname__"):
            blocks.append(
                f"::: {value.__module__}.{value.__qualname__}\n"
                "    options:\n      show_root_heading: true\n      show_root_full_path: false"
            )
    return "\n\n".join(blocks) + "\n"


def _section(nav, title):
    """The list of entries of the nav section called ``title`` (created if missing)."""
    for entry in nav:
        if isinstance(entry, dict) and title in entry:
            return entry[title]
    section = []
    nav.append({title: section})
    return section


def _named_pages(nav):
    """Every page path named anywhere in the nav."""
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            yield from _named_pages(value)
        else:
            yield value


class AltTextHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter, rendering each PNG output with the alt text its cell's
    metadata ``"alt"`` lists (an image without one is left to nbconvert's warning)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        nb = copy.deepcopy(nb)
        for cell in nb.cells:
            texts = iter(cell.metadata.get("alt", []))
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                text = next(texts, None) if "image/png" in data else None
                if text is not None:  # text/html outranks image/png in the display
                    data["text/html"] = (f'<img alt="{html.escape(text)}" '
                                         f'src="data:image/png;base64,{data["image/png"]}">')
        return super().from_notebook_node(nb, resources, **kw)


def on_config(config):
    mkdocs_jupyter.nbconvert2.HTMLExporter = AltTextHTMLExporter
    nav = config["nav"]
    _section(nav, "Tutorials").extend(
        f"{TUTORIALS}/{path.name}" for path in sorted((ROOT / TUTORIALS).glob("*.ipynb"))
    )
    _section(nav, "Benchmarks").extend(
        f"benchmarks/{path.name}" for path in sorted((DOCS / "benchmarks").glob("*.md"))
    )
    _section(nav, "API reference").extend(
        {f"geomstats_dp.{name}": _api_page(name)} for name in _subpackages()
    )
    named = set(_named_pages(nav))
    _section(nav, "User guide").extend(
        path.name
        for path in sorted(DOCS.glob("*.md"))
        if path.name not in named and path.name != "index.md"
    )
    return config


@mkdocs.plugins.event_priority(100)  # before mkdocs-jupyter wraps the notebooks
def on_files(files, config):
    for name in _subpackages():
        files.append(
            File.generated(config, _api_page(name), content=_api_markdown(name))
        )
    for folder, pattern in ((TUTORIALS, "*.ipynb"), (RESULTS, "*.png")):
        for path in sorted((ROOT / folder).glob(pattern)):
            files.append(
                File(
                    f"{folder}/{path.name}",
                    src_dir=str(ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files
