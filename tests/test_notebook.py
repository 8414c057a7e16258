"""What a notebook shows: a Result's tables as DataFrames, figures as matplotlib Figures, and
the HTML display (headline numbers, tables, figures inline). Synthetic runs, no native code."""

from __future__ import annotations

import base64

import pandas as pd

from cnsim import notebook
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


def test_headline_names_drop_places_and_control_kinds(make_result) -> None:
    rows = dict(notebook.headline(make_result(drops=42).summary))
    assert rows["frames dropped"].startswith("42")
    assert "qcn_cnm 321" in rows["control frames"]


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
    assert "cnsim sweep: nb (2/2 runs ok)" in page
    assert "frames.delivered" in page
    assert "data:image/png" not in page  # nothing drawn yet
    study.plot()
    assert study._repr_html_().count("data:image/png;base64,") == 1
