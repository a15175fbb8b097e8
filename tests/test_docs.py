"""The documentation site builds strictly (no warning), shows every tutorial and module, and
writes its formulas in TeX for MathJax."""

import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

import geomstats_dp

# the docs extra (mkdocs brings both)
markdown = pytest.importorskip("markdown")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.mark.slow
@pytest.mark.backend_independent
def test_site_builds_strictly_with_api_and_tutorials(tmp_path):
    """``mkdocs build --strict`` succeeds; each public subpackage has its API page listing
    the names of its ``__all__``; each notebook page carries its stored plots."""
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stderr[-4000:]

    package_dir = Path(geomstats_dp.__file__).parent
    packages = [path.parent.name for path in package_dir.glob("[!_]*/__init__.py")]
    assert packages
    for name in packages:
        module = __import__(f"geomstats_dp.{name}", fromlist=["__all__"])
        page = (tmp_path / "api" / name / "index.html").read_text()
        # a name shadowed by a submodule is documented at its defining module's path
        missing = [
            public
            for public in getattr(module, "__all__", [])
            if not re.search(rf'id="geomstats_dp\.{name}\.([\w.]+\.)?{public}"', page)
        ]
        assert not missing, f"API page of geomstats_dp.{name} lacks {missing}"

    for notebook in sorted((ROOT / "tutorials").glob("*.ipynb")):
        page = (tmp_path / "tutorials" / notebook.stem / "index.html").read_text()
        stored_images = notebook.read_text().count('"image/png"')
        assert len(re.findall(r"<img[^>]+src=\"data:image/png", page)) >= stored_images

    # the formulas reach the page marked for MathJax, and every page loads the local
    # stylesheets and scripts that mkdocs.yml names (--strict does not check that they exist)
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    local_assets = [path for path in config["extra_css"] + config["extra_javascript"]
                    if "://" not in path]
    assert "javascripts/mathjax.js" in local_assets
    for asset in local_assets:
        assert (tmp_path / asset).is_file(), asset
    page = (tmp_path / "laplace" / "index.html").read_text()
    assert re.search(r'<div class="arithmatex">\\\[', page)
    assert re.search(r'<span class="arithmatex">\\\(', page)
    for asset in config["extra_css"] + config["extra_javascript"]:
        assert asset.rsplit("/", 1)[-1] in page, asset


# An ASCII formula in prose: a square root written sqrt(...), a power written with a caret
# (sigma^2, 10^5, S^2, e^(-r)), an inequality written <= or >=, a function applied in
# plain text (min(1, C / |g|), exp(-x), log(1 + q)), a TeX subscript outside $...$
# (B_{D/2}), k_max, or a division by eps (Delta/eps, 4D/(n eps)). TeX ($...$, $$...$$)
# is expected there; code (blocks and spans) may write anything.
ASCII_FORMULA = re.compile(r"\bsqrt\(|[\w)\]]\^[-\w({]|<=|>=|\b(?:min|max|exp|log)\("
                           r"|[A-Za-z]_\{|\b[a-z]_max\b|/\s*\(?(?:n )?eps\b")


def _prose(html):
    """The text of a rendered page without its code, formulas and tags."""
    for pattern in (r"<pre\b.*?</pre>", r"<code\b.*?</code>",
                    r'<(span|div) class="arithmatex">.*?</\1>'):
        html = re.sub(pattern, " ", html, flags=re.DOTALL)
    return unescape(re.sub(r"<[^>]+>", " ", html))


@pytest.mark.backend_independent
def test_docs_pages_write_formulas_in_tex():
    """Every page of the site, rendered with the site's Markdown extensions, writes its
    formulas in TeX: no ASCII formula is left in its prose."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    extensions, options = [], {}
    for entry in config["markdown_extensions"]:
        name, settings = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        extensions.append(name)
        options[name] = settings or {}
    renderer = markdown.Markdown(extensions=extensions, extension_configs=options)
    pages = sorted(DOCS.rglob("*.md"))
    assert len(pages) > 20
    found = []
    for page in pages:
        renderer.reset()
        for line in _prose(renderer.convert(page.read_text())).splitlines():
            if ASCII_FORMULA.search(line):
                found.append(f"{page.relative_to(ROOT)}: {line.strip()}")
    assert not found, "ASCII formulas (write them in TeX):\n" + "\n".join(found)


@pytest.mark.backend_independent
def test_ascii_formula_check_finds_ascii_and_passes_tex():
    """The check above flags the ASCII forms and leaves TeX, code and plain text alone."""
    renderer = markdown.Markdown(extensions=["pymdownx.arithmatex", "pymdownx.superfences"],
                                 extension_configs={"pymdownx.arithmatex": {"generic": True}})
    for ascii_text in ("noise sigma^2 at 10^5 steps", "a bound sqrt(n) on it",
                       "for n <= 30", "at e^(-r) rate", "on S^2", "g min(1, C / |g|)",
                       "Bernoulli(exp(-x))", "in log(1 + q)", "the ball B_{D/2}(I)",
                       "makes k_max runs", "sigma = Delta/eps", "sigma = 4D/(n eps)"):
        assert ASCII_FORMULA.search(_prose(renderer.convert(ascii_text))), ascii_text
    for clean in (r"noise $\sigma^2$ at $10^5$ steps, $n \leq 30$",
                  "$$\n\\sqrt{n} \\geq 1\n$$", "call `x ** 2` or `a <= b`",
                  "```python\nx = sqrt(y) ** 2  # y >= 0\n```",
                  "the sample-to-sample step -> done, 2-3 seeds, x > 0",
                  r"$g \min(1, C / \lVert g \rVert)$ and $\sigma = \Delta / \varepsilon$",
                  "the minimum (min) of the exponent, max_runs=None at eps = 1"):
        assert not ASCII_FORMULA.search(_prose(renderer.convert(clean))), clean


@pytest.mark.backend_independent
def test_every_benchmark_page_states_its_machine_load_and_ratios():
    """Each page of docs/benchmarks opens with its measurement conditions: the machine,
    the load during the run and what its ratios compare (the same run)."""
    pages = sorted((DOCS / "benchmarks").glob("*.md"))
    assert len(pages) > 10
    missing = []
    for page in pages:
        head = page.read_text().split("\n## ", 1)[0]
        box = head.split('!!! info "Measurement conditions"', 1)
        if len(box) < 2 or not all(f"- **{entry}:**" in box[1]
                                   for entry in ("Machine", "Load", "Ratios")):
            missing.append(page.name)
    assert not missing, f"no measurement conditions (machine, load, ratios): {missing}"
