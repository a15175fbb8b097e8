"""Execute tutorial notebooks and store their outputs (plots included) in place.

Usage: ``python tutorials/execute.py [NOTEBOOK ...]`` (default: every ``tutorials/*.ipynb``);
``make notebooks`` runs it on all of them. Run it after editing a notebook and commit the
notebook with its outputs: the documentation site shows the stored outputs, and
``tests/test_tutorials.py`` checks that they are those of a fresh run.
"""

import argparse
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

TUTORIALS = Path(__file__).resolve().parent
# Plots are stored as PNG outputs only with the inline backend (make exports MPLBACKEND=Agg).
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def execute_notebook(path, timeout=600):
    """Run a notebook from top to bottom in a fresh python3 kernel.

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.ipynb`` file; it runs with its own folder as working directory.
    timeout : int
        Limit in seconds for one cell.

    Returns
    -------
    notebook : nbformat.NotebookNode
        The executed notebook (the file is not written).
    """
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    saved = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = INLINE_BACKEND
    try:
        NotebookClient(
            notebook, timeout=timeout, kernel_name="python3", record_timing=False
        ).execute(cwd=str(path.parent))
    finally:
        if saved is None:
            del os.environ["MPLBACKEND"]
        else:
            os.environ["MPLBACKEND"] = saved
    _relative_paths(notebook)
    return notebook


def _relative_paths(notebook):
    """Write paths under the repository relative to it in the text outputs (warnings name
    the files they come from; a stored notebook must not name this machine's folders)."""
    root = str(TUTORIALS.parent) + os.sep
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = output["text"].replace(root, "")
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = value.replace(root, "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    for path in args.notebooks or sorted(TUTORIALS.glob("*.ipynb")):
        print(f"executing {path}", flush=True)
        nbformat.write(execute_notebook(path), path)


if __name__ == "__main__":
    main()
