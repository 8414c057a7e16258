"""docs/example.ipynb runs top to bottom in a Jupyter kernel, and shows what it promises: the
result's HTML display with inline figures, a figure, and DataFrames."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "example.ipynb"


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": "/tmp"}}
    )
    client.execute()
    return notebook


def outputs(notebook: nbformat.NotebookNode, source_start: str) -> list[dict]:
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.source.startswith(source_start):
            return cell.outputs
    raise AssertionError(f"no cell starts with {source_start!r}")


def test_notebook_runs_without_errors(executed) -> None:
    for cell in executed.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", "".join(out.get("traceback", []))


def test_result_cell_shows_html_with_figures(executed) -> None:
    shown = [o for o in outputs(executed, "import cnsim") if o.output_type == "execute_result"]
    page = shown[0].data["text/html"]
    assert "cnsim: seed004-qcn (seed 1)" in page
    assert "recovery_time_s" in page
    assert page.count("data:image/png;base64,") >= 4


def test_progress_is_drawn_in_the_cell(executed) -> None:
    displays = [o for o in outputs(executed, "import cnsim") if o.output_type == "display_data"]
    assert any("<progress" in o.data.get("text/html", "") for o in displays)


def test_figure_cell_shows_a_png(executed) -> None:
    shown = outputs(executed, 'result.figure("aggregate_throughput")')
    assert any("image/png" in o.get("data", {}) for o in shown)


def test_tables_are_dataframes(executed) -> None:
    shown = outputs(executed, "result.per_source")
    assert "<table" in shown[0].data["text/html"]
    assert "throughput_bps" in shown[0].data["text/html"]
