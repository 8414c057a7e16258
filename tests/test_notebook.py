"""What a notebook shows: a Result's tables as DataFrames, figures as matplotlib Figures, and
the HTML display (the terminal's lines, tables, figures inline). Synthetic runs, and two small
native runs (a flow workload, PFC) whose display must say what the terminal says."""

from __future__ import annotations

import base64
import html

import pandas as pd

from cnsim import notebook, readout, terminal
from cnsim.result import Result

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_per_source_and_per_port_are_dataframes(make_result) -> None:
    result = make_result()
    sources = result.per_source
    assert isinstance(sources, pd.DataFrame)
    assert sources.index.name == "host"
    assert list(sources.index) == list(result.summary["per_source"])
    assert (
        sources.loc["ep0", "throughput_bps"]
        == result.summary["per_source"]["ep0"]["throughput_bps"]
    )
    ports = result.per_port
    assert ports.index.name == "port"
    assert ports.loc["core->ep4", "peak_queue_bytes"] == 90_000
    assert result.per_switch.loc["core", "peak_memory_bytes"] == 90_000


def test_missing_tables_are_empty_frames() -> None:
    result = Result({"scenario": "x"}, 'name = "x"\n', pd.DataFrame(), add_metrics=False)
    assert result.per_source.empty
    assert result.flows.empty
    assert result.window_per_source.empty


def test_html_display_has_headline_tables_and_inline_figures(make_result) -> None:
    result = make_result(drops=42)
    page = result._repr_html_()
    assert "cnsim: synthetic (seed" in page
    assert "frames dropped" in page
    assert "per source" in page
    assert "core-&gt;ep4" in page  # port names are escaped
    images = page.split('src="data:image/png;base64,')[1:]
    assert len(images) == len(result.figure_names) == 5
    first = base64.b64decode(images[0].split('"', 1)[0])
    assert first[:8] == PNG_MAGIC


def test_run_lines_name_drop_places_and_control_kinds(make_result) -> None:
    rows = {line.label: line.text for line in readout.run_lines(make_result(drops=42))}
    assert rows["frames dropped"].startswith("42")
    assert "qcn_cnm 321" in rows["control frames"]
    assert rows["control frames"].endswith("(1.6 Mb/s)")  # as the terminal prints it


def test_flow_run_shows_what_the_terminal_shows() -> None:
    """A flow run's notebook view has the terminal's flow lines (completed, FCT p50/p99,
    slowdown), its latency line, and every other line the terminal prints, word for word."""
    import cnsim

    result = cnsim.run("flows-16-exp", set={"duration_s": 0.005})
    page = result._repr_html_()
    flows = result.summary["flows"]
    assert f"{flows['completed']:,} of {flows['started']:,} completed" in page
    for word in ("p50 ", "p99 ", "slowdown "):
        assert word in page
    assert "latency" in page
    for line in terminal.summary_lines(result.summary):
        assert html.escape(line.text) in page, line


def test_pfc_run_shows_the_pfc_lines() -> None:
    import cnsim

    short = {"duration_s": 0.003, "report.window_s": [0.001, 0.003]}
    result = cnsim.run("pfc-victim-flow", set=short)
    page = result._repr_html_()
    assert "pfc class 3" in page
    assert html.escape(result.summary["pfc"]["classes"]["3"]["why"]) in page


def test_hosts_in_natural_order_and_rates_in_human_units() -> None:
    summary = {
        "per_source": {
            name: {"offered_bps": 5.068e10, "throughput_bps": 6.415e7, "dropped_frames": 0}
            for name in ("h1", "h10", "h11", "h2")
        }
    }
    table = notebook.run_tables(summary)[0]
    assert [row[0].text for row in table.rows] == ["h1", "h2", "h10", "h11"]
    assert table.rows[0][1].text == "50.7 Gb/s"
    assert table.rows[0][2].text == "64.2 Mb/s"
    page = notebook.table_html(table)
    assert "5.068e+10" not in page
    assert "50.7 Gb/s" in page


def test_sweep_html_has_runs_statistics_and_drawn_figures(tmp_path) -> None:
    import cnsim

    sweep = {
        "name": "nb",
        "base": "seed000-pause-bcn",
        "replications": 1,
        "metrics": ["frames.delivered"],
        "grid": {"congestion.bcn.sampling.interval_bytes": [20_000, 80_000]},
        "set": {"duration_s": 0.002, "report.window_s": [0.0, 0.002]},
        "plots": [{"x": "congestion.bcn.sampling.interval_bytes", "y": "frames.delivered"}],
    }
    study = cnsim.sweep({"sweep": sweep}, out=tmp_path / "nb", jobs=1, progress=False)
    page = study._repr_html_()
    assert "cnsim sweep: nb (2/2 runs ok" in page
    assert "frames.delivered" in page
    assert "data:image/png" not in page  # nothing drawn yet
    study.plot()
    assert study._repr_html_().count("data:image/png;base64,") == 1
