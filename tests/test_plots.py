"""Plots and the on-disk output contract, from synthetic runs (no native module needed)."""

from __future__ import annotations

import json

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from cnsim import plots
from cnsim.result import Result

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path, width=960, height=540):
    """A real PNG of the expected size (8 x 4.5 in at 120 dpi unless told otherwise)."""
    assert path.read_bytes()[:8] == PNG_MAGIC
    image = matplotlib.image.imread(path)
    assert image.shape[:2] == (height, width)
    assert image.std() > 0.01  # not a blank canvas


# ---------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("metric", "max_abs", "expected"),
    [
        ("host_tx_bps", 9.5e9, (1e9, "Gb/s")),
        ("rp_rate_bps", 5e6, (1e6, "Mb/s")),
        ("queue_bytes", 150e3, (1e3, "KB")),
        ("switch_memory_bytes", 4.8e7, (1e6, "MB")),
        ("paused_frac", 1.0, (0.01, "%")),
        ("fct_p99_s", 3e-4, (1e-6, "us")),
        ("recovery_time_s", 0.07, (1e-3, "ms")),
        ("duration_s", 9.0, (1.0, "s")),
        ("dropped_frames", 10, (1.0, "frames")),
        ("cp_messages", 10, (1.0, "messages")),
        ("cp_fb", -30, (1.0, "")),
    ],
)
def test_value_unit(metric, max_abs, expected):
    assert plots.value_unit(metric, max_abs) == expected


def test_time_unit_by_span():
    assert plots.time_unit(0.195) == (1e3, "ms")
    assert plots.time_unit(1.0) == (1e3, "ms")
    assert plots.time_unit(9.0) == (1.0, "s")


def test_axis_label_uses_the_seeds_words():
    assert plots.axis_label("host_tx_bps", "Gb/s") == "accepted throughput (Gb/s)"
    assert plots.axis_label("cp_fb", "") == "feedback Fb"


def test_file_stem_is_path_safe():
    assert plots.file_stem("egress throughput/core") == "egress_throughput_core"
    assert plots.file_stem("../..") == "plot"


# ---------------------------------------------------------------- make_plots


def test_default_set_without_report_plots(make_result, tmp_path):
    paths = plots.make_plots(make_result(), tmp_path)
    names = [p.name for p in paths]
    assert names == [
        "aggregate_throughput.png",
        "queues.png",
        "rp_rate.png",
        "per_source_throughput.png",
    ]
    for path in paths:
        assert_png(path)


def test_drops_plot_only_when_frames_were_dropped(make_result, tmp_path):
    paths = plots.make_plots(make_result(drops=42), tmp_path)
    drops = tmp_path / "drops.png"
    assert drops in paths
    assert_png(drops, width=round(960 * 1.6))
    assert plots.plot_drops(make_result(drops=0)) is None


def test_report_plots_drive_the_figures(make_result, tmp_path):
    specs = [
        {
            "name": "egress_throughput",
            "kind": "timeseries",
            "metric": "host_tx_bps",
            "entities": ["ep[01]"],
            "aggregate": "sum",
            "title": "Egress throughput vs time",
            "xlim_s": [0.02, 0.08],
        },
        {"name": "queue", "kind": "timeseries", "metric": "queue_bytes", "entities": ["core->*"]},
        {"name": "bars", "kind": "bar", "metric": "throughput_bps"},
        {"name": "peak", "kind": "bar", "metric": "peak_queue_bytes"},
        {"name": "mean_rate", "kind": "bar", "metric": "rp_rate_bps"},
    ]
    paths = plots.make_plots(make_result(plots=specs), tmp_path)
    assert [p.stem for p in paths] == ["egress_throughput", "queue", "bars", "peak", "mean_rate"]
    for path in paths:
        assert_png(path)


def test_unusable_specs_warn_and_are_skipped(make_result, tmp_path):
    specs = [
        {"name": "missing", "kind": "timeseries", "metric": "cp_fb"},
        {"name": "weird", "kind": "heatmap", "metric": "queue_bytes"},
        {"name": "nobody", "kind": "bar", "metric": "throughput_bps", "entities": ["x*"]},
        {"name": "ok", "kind": "timeseries", "metric": "queue_bytes"},
    ]
    with pytest.warns(UserWarning, match="skipped") as caught:
        paths = plots.make_plots(make_result(plots=specs), tmp_path)
    messages = " | ".join(str(w.message) for w in caught)
    assert "plot 'missing' skipped: no metric 'cp_fb'" in messages
    assert "unknown plot kind 'heatmap'" in messages
    assert "plot 'nobody' skipped" in messages
    assert [p.name for p in paths] == ["ok.png"]


def test_all_zero_series_are_hidden_unless_asked_for(make_result, tmp_path):
    result = make_result()
    table, omitted = plots.drop_all_zero(result.series("queue_bytes"), explicit=False)
    assert list(table.columns) == ["core->ep4"]
    assert omitted == 1
    table, omitted = plots.drop_all_zero(result.series("queue_bytes"), explicit=True)
    assert omitted == 0
    assert table.shape[1] == 2


def test_bar_values_prefer_the_report_window(make_result):
    values, per, where = plots.bar_values(make_result(), "throughput_bps")
    assert values["ep1"] == pytest.approx(3.54e9)
    assert "ep4" not in values  # a pure sink is not a source
    assert (per, where) == ("source", "window 20-80 ms")
    _, _, where = plots.bar_values(make_result(window=False), "throughput_bps")
    assert where == "whole run"
    values, per, where = plots.bar_values(make_result(), "peak_queue_bytes")
    assert (per, where) == ("port", "whole run")
    assert list(values) == ["core->ep4", "es0->core"]  # the switch row has no queue
    means, per, where = plots.bar_values(make_result(), "rp_rate_bps")
    assert (per, where) == ("entity", "mean, window 20-80 ms")
    assert means["ep0->ep4"] == pytest.approx((10e9 * 10 + 2.5e9 * 51) / 61, rel=0.02)


# ---------------------------------------------------------------- the output contract


def test_save_writes_the_output_contract(make_result, tmp_path):
    result = make_result(drops=3, recovery={"after_s": 0.06, "capacity_bps": 9.5e9})
    out = result.save(tmp_path / "run")
    assert (out / "scenario.toml").read_text() == result.scenario_toml
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["recovery_time_s"] == pytest.approx(0.010)
    assert summary["frames"]["dropped"]["total"] == 3
    table = pd.read_parquet(out / "timeseries.parquet")
    assert list(table.columns) == ["time_s", "metric", "entity", "value"]
    assert isinstance(table["metric"].dtype, pd.CategoricalDtype)
    assert sorted(p.name for p in (out / "plots").glob("*.png")) == [
        "aggregate_throughput.png",
        "drops.png",
        "per_source_throughput.png",
        "queues.png",
        "rp_rate.png",
    ]


def test_save_without_plots_and_stale_plots_removed(make_result, tmp_path):
    stale = tmp_path / "plots" / "old.png"
    stale.parent.mkdir()
    stale.write_bytes(PNG_MAGIC)
    make_result().save(tmp_path, plots=False)
    # A saved directory holds only this run's files: an earlier run's figures would lie.
    assert not stale.exists()
    assert not (tmp_path / "plots").exists()
    make_result().save(tmp_path)
    assert not stale.exists()
    assert (tmp_path / "plots").is_dir()


def test_summary_json_is_strict(make_result, tmp_path):
    result = make_result()
    result.summary["metrics"]["broken"] = float("nan")
    result.save(tmp_path, plots=False)
    text = (tmp_path / "summary.json").read_text()
    assert "NaN" not in text
    assert json.loads(text)["metrics"]["broken"] is None


def test_saved_run_loads_back(make_result, tmp_path):
    result = make_result(recovery={"after_s": 0.06, "capacity_bps": 9.5e9})
    loaded = Result.load(result.save(tmp_path, plots=False))
    assert loaded.summary == json.loads(json.dumps(result.summary))
    assert loaded.scenario["report"]["window_s"] == [0.02, 0.08]
    pd.testing.assert_frame_equal(loaded.series("host_tx_bps"), result.series("host_tx_bps"))
    assert "synthetic" in repr(loaded)


# ---------------------------------------------------------------- figures in memory, readability


def test_figure_returns_a_matplotlib_figure_by_name(make_result):
    from matplotlib.figure import Figure

    result = make_result(drops=5)
    assert plots.figure_names(result) == [
        "aggregate_throughput",
        "queues",
        "rp_rate",
        "per_source_throughput",
        "drops",
    ]
    fig = result.figure("queues")
    assert isinstance(fig, Figure)
    assert fig.axes[0].get_ylabel() == "queue length (KB)"
    with pytest.raises(KeyError, match="figures: aggregate_throughput"):
        result.figure("nope")


def test_axis_labels_do_not_repeat_their_unit():
    assert plots.axis_label("dropped_frames", "frames") == "dropped frames (cumulative)"
    assert plots.axis_label("cp_messages", "messages") == "congestion messages (cumulative)"
    assert plots.axis_label("queue_bytes", "KB") == "queue length (KB)"


def test_rates_of_rate_limiters_are_steps(make_result):
    line = make_result().figure("rp_rate").axes[0].lines[0]
    assert line.get_drawstyle() == "steps-post"


def test_dense_series_keep_their_peaks_in_an_envelope():
    times = np.arange(18_000) * 5e-4
    values = np.where(np.arange(18_000) % 7 == 0, 150e3, 10e3)  # spikes every 7th sample
    values[9_001] = 400e3  # one extreme peak
    t, low, high, mean = plots.envelope(times, values, 600)
    assert t.size == 600
    assert high.max() == 400e3
    assert low.min() == 10e3
    assert (high == 150e3).sum() + (high == 400e3).sum() == 600  # every bin shows its spike
    assert np.all((low <= mean) & (mean <= high))


def test_drops_figure_leaves_out_what_another_figure_shows(make_result, tmp_path):
    specs = [{"name": "switch_drops", "metric": "dropped_frames", "entities": ["core"]}]
    paths = plots.make_plots(make_result(drops=42, plots=specs), tmp_path)
    assert [p.name for p in paths] == ["switch_drops.png", "drops.png"]
    assert_png(tmp_path / "drops.png")  # one panel (by place), not 1.6 wide with the curve


def test_counts_get_whole_ticks(make_result):
    specs = [{"name": "switch_drops", "metric": "dropped_frames", "entities": ["core"]}]
    ax = make_result(drops=0, plots=specs).figure("switch_drops").axes[0]
    assert ax.get_ylim() == (0.0, 1.0)
    assert all(float(t).is_integer() for t in ax.get_yticks())


def test_a_close_up_draws_its_own_samples_not_bins_of_the_whole_run(make_result):
    specs = [{"name": "zoom", "metric": "rp_rate_bps", "xlim_s": [0.02, 0.025]}]
    result = make_result(probe_s=1e-5, plots=specs)  # 10,000 samples, 500 in the window
    line = result.figure("zoom").axes[0].lines[0]
    assert line.get_drawstyle() == "steps-post"  # exact samples, not an envelope
    assert 500 <= len(line.get_xdata()) <= 503


def test_a_flat_line_at_its_maximum_does_not_lie_on_the_frame(make_result):
    specs = [{"name": "flat", "metric": "host_tx_bps", "entities": ["ep0"]}]
    ax = make_result(plots=specs).figure("flat").axes[0]
    top = max(line.get_ydata().max() for line in ax.lines)
    assert ax.get_ylim()[0] == 0
    assert ax.get_ylim()[1] >= 1.04 * top
