"""`cnsim report DIR [--html]`: a saved run's or sweep's tables again, or one self-contained
HTML file (summary tables, figures inlined, flow statistics, the resolved scenario) that opens
offline. Checked by parsing the file; a headless-browser rendering test is still to come."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cnsim
from cnsim import cli

runner = CliRunner()
SWEEP = """
[sweep]
name = "rep"
base = "seed000-pause"
metrics = ["frames.delivered"]
grid = { "traffic[0].load" = [0.2, 0.4] }
set = { duration_s = 0.002, "report.window_s" = [0.0, 0.002] }
"""


class Page(HTMLParser):
    """What a browser would fetch (every src and href) and the page's text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.headings: list[str] = []
        self._tag = ""
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag = tag
        for name, value in attrs:
            if name in ("src", "href") and value is not None:
                self.links.append(value)
                if tag == "img":
                    self.images.append(value)

    def handle_data(self, data: str) -> None:
        if self._tag in ("h1", "h2", "h3"):
            self.headings.append(data.strip())
        self._tag = ""


@pytest.fixture(scope="module")
def flow_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "run"
    cnsim.run("flows-16-exp", set={"duration_s": 0.01}).save(out)
    return out


def test_html_report_of_a_run_is_self_contained(flow_run: Path) -> None:
    done = runner.invoke(cli.app, ["report", str(flow_run), "--html"])
    assert done.exit_code == 0, done.output
    text = (flow_run / "report.html").read_text()
    page = Page(text)
    assert text.startswith("<!DOCTYPE html>")
    assert page.headings[:2] == ["cnsim: flows-16-exp (seed 1)", "Summary"]
    assert {"flows by size", "Figures", "Resolved scenario"} <= set(page.headings)
    assert all(link.startswith("data:image/png;base64,") for link in page.links)  # offline
    # queues, throughput, fct_cdf, fct_by_size, fct_slowdown_by_size
    assert len(page.images) == len(list((flow_run / "plots").glob("*.png"))) == 5
    assert "FCT p99" in text  # the headline, first
    assert text.index("FCT p99") < text.index("frames generated")
    assert "completed" in text
    assert "name = &quot;flows-16-exp&quot;" in text  # the resolved scenario


def test_a_run_directory_with_its_report_can_be_written_again(flow_run: Path) -> None:
    runner.invoke(cli.app, ["report", str(flow_run), "--html"])
    cnsim.run("flows-16-exp", set={"duration_s": 0.002}).save(flow_run, plots=False)
    assert not (flow_run / "report.html").exists()  # the new run replaced the directory


def test_report_prints_a_saved_runs_table(tmp_path: Path) -> None:
    out = cnsim.run(
        "pfc-victim-flow", set={"duration_s": 0.003, "report.window_s": [0.001, 0.003]}
    ).save(tmp_path / "pfc", plots=False)
    done = runner.invoke(cli.app, ["report", str(out)])
    assert done.exit_code == 0, done.output
    assert "victim VS -> VR" in done.output
    assert "window 1-3 ms, per source" in done.output


def test_html_report_of_a_sweep(tmp_path: Path) -> None:
    spec = tmp_path / "rep.toml"
    spec.write_text(SWEEP)
    study = cnsim.sweep(spec, out=tmp_path / "s", jobs=1, progress=False)
    out = tmp_path / "elsewhere" / "rep.html"
    done = runner.invoke(cli.app, ["report", str(study.out_dir), "--html", "--out", str(out)])
    assert done.exit_code == 0, done.output
    text = out.read_text()
    page = Page(text)
    assert page.headings[0].startswith("cnsim sweep: rep (2/2 runs ok")
    assert len(page.images) == 1  # drawn for the report: the study has no plots/
    assert all(link.startswith("data:") for link in page.links)
    assert "[sweep]" in text  # the sweep file
    assert "frames delivered" not in page.headings


def test_report_of_a_directory_that_is_no_run_is_a_clear_error(tmp_path: Path) -> None:
    done = runner.invoke(cli.app, ["report", str(tmp_path), "--html"])
    assert done.exit_code == 2
    assert "not a cnsim run or sweep directory" in done.output
