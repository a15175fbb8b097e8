"""The documentation site builds strictly (no warning) and shows every tutorial and module."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import geomstats_dp

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.backend_independent
def test_site_builds_strictly_with_api_and_tutorials(tmp_path):
    """``mkdocs build --strict`` succeeds; each public subpackage has its API page listing
    the names of its ``__all__``; each notebook page carries its stored plots."""
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
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
