"""Every notebook in notebooks/ runs from a clean kernel without errors (nbclient)."""

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "new_mechanism", "table2_and_figures", "checking_claims",
                                         "regression_registry"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    # a fresh kernel; it inherits the environment, RDPSYM_CACHE_DIR from conftest included, so
    # derivations are shared with the rest of the suite (and the warm-up's are found); it imports the
    # rdpsym of this tree, as the tests do, not whichever copy is installed
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


def test_a_failing_cell_is_reported(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("raise ValueError('deliberately broken')")]
    client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3")
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="deliberately broken"):
        client.execute()
