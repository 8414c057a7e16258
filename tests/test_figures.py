"""Figures worth publishing (issue 27): many entities as a band with the extremes named, a
zoomed steady-state panel under a start-up spike, the experiment's reference lines, the victim
marked, titles that do not repeat themselves, metrics explained."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.colors import to_hex

import cnsim
from cnsim import references
from cnsim.plots import timeseries
from cnsim.result import Result, timeseries_frame
from conftest import native_timeseries

# ---------------------------------------------------------------- synthetic runs


def synthetic(series: dict, plots: list[dict], scenario_extra: str = "") -> Result:
    times = np.arange(1, 201) * 1e-4  # 20 ms of 100 us probes
    columns = {key: fn(times) for key, fn in series.items()}
    toml = (
        'name = "synthetic"\nduration_s = 0.02\n' + scenario_extra + "\n[report]\n"
        "probe_interval_s = 1e-4\n"
    )
    for plot in plots:
        toml += "[[report.plots]]\n" + "".join(
            f"{k} = {v!r}\n".replace("'", '"') for k, v in plot.items()
        )
    summary = {"scenario": "synthetic", "seed": 1, "sim_time_s": 0.02, "metrics": {}}
    frame = timeseries_frame(native_timeseries(times, columns))
    return Result(summary, toml, frame, add_metrics=False)


def labels(ax) -> list[str]:
    return ax.get_legend_handles_labels()[1]


def test_many_entities_are_a_band_with_the_extremes_named() -> None:
    ports = {
        ("queue_bytes", f"sw->h{i}"): (lambda t, i=i: 1e3 * i + 100 * np.sin(t * 1e3))
        for i in range(1, 17)
    }
    ports["queue_bytes", "sw->h7"] = lambda t: 1e5 * ((t > 0.01) & (t < 0.0105))  # one spike
    result = synthetic(ports, [{"name": "q", "metric": "queue_bytes"}])
    ax = result.figure("q").axes[0]
    names = labels(ax)
    assert "range of 16" in names
    assert "median of 16" in names
    assert "sw->h16 (highest mean)" in names
    assert "sw->h1 (lowest mean)" in names
    assert "sw->h7 (highest peak)" in names
    assert len(ax.get_lines()) == 4  # median + three extremes, not 16 lines


def test_a_few_entities_stay_lines() -> None:
    ports = {("queue_bytes", f"sw->h{i}"): (lambda t, i=i: 1e3 * i + t) for i in range(1, 5)}
    result = synthetic(ports, [{"name": "q", "metric": "queue_bytes"}])
    assert labels(result.figure("q").axes[0]) == ["sw->h1", "sw->h2", "sw->h3", "sw->h4"]


def test_a_start_up_spike_gets_a_zoomed_steady_panel() -> None:
    def spike_then_oscillation(t: np.ndarray) -> np.ndarray:
        return np.where(t < 0.002, 3e6, 150e3 + 50e3 * np.sin(t * 3e3))

    result = synthetic(
        {("queue_bytes", "sw->recv"): spike_then_oscillation},
        [{"name": "q", "metric": "queue_bytes"}],
    )
    fig = result.figure("q")
    assert len(fig.axes) == 2
    zoom = fig.axes[1]
    assert zoom.get_xlim()[0] == pytest.approx(10.05)  # the run's second half, in ms
    assert zoom.get_ylim()[1] < 300  # KB: scaled to the oscillation, not the 3 MB spike
    assert "zoomed" in zoom.get_title()


def test_no_zoom_without_a_spike_or_for_a_flat_steady_part() -> None:
    flat_after = {("rp_rate_bps", "a->b"): lambda t: np.where(t < 0.005, 40e9, 5e9)}
    result = synthetic(flat_after, [{"name": "r", "metric": "rp_rate_bps"}])
    assert len(result.figure("r").axes) == 1
    steady = {("queue_bytes", "sw->b"): lambda t: 1e5 + 1e4 * np.sin(t * 1e3)}
    result = synthetic(steady, [{"name": "q", "metric": "queue_bytes"}])
    assert len(result.figure("q").axes) == 1


# ---------------------------------------------------------------- references


INCAST = {
    "name": "x",
    "hosts": [{"name": f"s{i}"} for i in range(1, 9)] + [{"name": "recv"}],
    "switches": [{"name": "sw", "output_buffer_bytes": 150_000.0}],
    "links": [{"ends": [f"s{i}", "sw"], "rate_bps": 40e9} for i in range(1, 9)]
    + [{"ends": ["sw", "recv"], "rate_bps": 40e9}],
    "traffic": [{"kind": "saturate", "hosts": [f"s{i}" for i in range(1, 9)], "dst": "recv"}],
    "congestion": {"scheme": "dcqcn", "dcqcn": {"kmin_bytes": 5e3, "kmax_bytes": 2e5}},
}
CP = {"per_port": {"sw->recv": {"congestion_point": True}}}


def test_queue_references_are_the_schemes_thresholds_and_the_limit() -> None:
    refs = references.plot_references(INCAST, CP, "queue_bytes", ["sw->recv"])
    assert [(r.label, r.values) for r in refs] == [
        ("Kmin 5 KB", (5e3,)),
        ("Kmax 200 KB", (2e5,)),
        ("queue limit 150 KB", (150e3,)),
    ]
    no_cp = references.plot_references(INCAST, {}, "queue_bytes", ["sw->recv"])
    assert [r.label for r in no_cp] == ["queue limit 150 KB"]


def test_fair_share_is_c_over_n_of_the_receivers_link() -> None:
    (share,) = references.plot_references(INCAST, CP, "rp_rate_bps", ["s1->recv", "s2->recv"])
    assert share.values == (5e9,)
    assert share.label == "fair share of recv's link, C/N (N = 8) = 5 Gb/s"


def test_fair_share_follows_a_link_schedule_and_start_times() -> None:
    scenario = {
        **INCAST,
        "links": [
            *INCAST["links"][:-1],
            {
                "ends": ["sw", "recv"],
                "rate_bps": 40e9,
                "schedule": [{"from": "sw", "at_s": 3.0, "rate_bps": 8e9}],
            },
        ],
        "traffic": [
            {"kind": "saturate", "hosts": ["s1", "s2", "s3", "s4"], "dst": "recv"},
            {"kind": "saturate", "hosts": ["s5"], "dst": "recv", "start_s": 1.0},
        ],
    }
    share = references.fair_share(scenario, ["s1"])
    assert share is not None
    assert share.times_s == (0.0, 1.0, 3.0)
    assert share.values == (10e9, 8e9, 1.6e9)


def test_no_fair_share_when_it_does_not_bind_or_destinations_differ() -> None:
    light = {**INCAST, "traffic": [{**INCAST["traffic"][0], "kind": "bernoulli", "load": 0.1}]}
    assert references.fair_share(light, ["s1"]) is None  # 8 x 4 Gb/s fit in 40 Gb/s
    uniform = {**INCAST, "traffic": [{**INCAST["traffic"][0], "dst": "uniform"}]}
    assert references.fair_share(uniform, ["s1"]) is None


def test_water_filling_gives_the_unused_share_to_the_others() -> None:
    assert references._water_level(10.0, [1.0, 9.0, 9.0]) == pytest.approx(4.5)
    assert math.isnan(references._water_level(10.0, []))  # no sender: no share


def test_pause_watermarks_on_the_quantity_they_watch() -> None:
    scenario = {
        "switches": [
            {"name": "es0", "pause": {"trigger": "global", "xoff_bytes": 140e3, "xon_bytes": 130e3}}
        ]
    }
    refs = references.plot_references(scenario, {}, "switch_memory_bytes", ["es0"])
    assert [r.label for r in refs] == ["PAUSE XOFF 140 KB", "PAUSE XON 130 KB"]
    assert references.plot_references(scenario, {}, "queue_bytes", ["es0->core"]) == []


# ---------------------------------------------------------------- the presets' figures


@pytest.fixture(scope="module")
def incast() -> Result:
    return cnsim.run("dcqcn-incast")


def test_dcqcn_queue_draws_kmin_kmax_and_zooms_on_the_steady_state(incast: Result) -> None:
    fig = incast.figure("switch_queue")
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert {"Kmin 5 KB", "Kmax 200 KB"} <= set(labels(ax))
    zoom = fig.axes[1]
    assert zoom.get_xlim()[0] == pytest.approx(30.0)  # [report.steady].start_s, in ms
    assert zoom.get_ylim()[1] < 0.5 * fig.axes[0].get_ylim()[1]


def test_dcqcn_rates_draw_the_fair_share(incast: Result) -> None:
    names = labels(incast.figure("rp_rates").axes[0])
    assert "fair share of recv's link, C/N (N = 8) = 5 Gb/s" in names


def test_pfc_victim_is_marked_with_its_fair_share_in_the_plot() -> None:
    result = cnsim.run(
        "pfc-victim-flow", set={"duration_s": 0.004, "report.window_s": [0.001, 0.004]}
    )
    ax = result.figure("per_source_throughput").axes[0]
    assert "fair:" not in ax.get_title()
    bars = {t.get_text(): p for t, p in zip(ax.get_xticklabels(), ax.patches, strict=False)}
    assert to_hex(bars["VS"].get_facecolor()) != to_hex(bars["H12"].get_facecolor())
    assert {"victim VS -> VR", "max-min fair share"} <= set(labels(ax))
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    heights = {round(seg[0][1], 6) for c in lines for seg in c.get_segments()}
    assert heights == {20.0, 10.0}  # Gb/s: the victim's fair share and H11's


def test_a_bar_title_does_not_repeat_the_window() -> None:
    result = cnsim.run("seed000-pause", set={"duration_s": 0.03, "report.window_s": [0.02, 0.03]})
    spec = {
        "name": "b",
        "kind": "bar",
        "metric": "host_tx_bps",
        "title": "Per source (window 20-30 ms)",
    }
    from cnsim.plots import plot_bar

    title = plot_bar(result, {**spec, "entities": []}).axes[0].get_title()
    assert title.count("window 20-30 ms") == 1


def test_accepted_throughput_is_explained_under_its_figures() -> None:
    result = cnsim.run("seed000-pause", set={"duration_s": 0.01, "report.window_s": [0.0, 0.01]})
    texts = [t.get_text() for t in result.figure("source_throughput").texts]
    assert any(t.startswith("accepted throughput: data the host's NIC transmitted") for t in texts)


def test_extremes_are_named_once_each() -> None:
    values = np.array([[1.0, 5.0, 0.0], [1.0, 5.0, 9.0]])
    assert timeseries.extremes(values) == [
        (1, "highest mean"),
        (0, "lowest mean"),
        (2, "highest peak"),
    ]
    assert timeseries.extremes(np.array([[1.0, 9.0]])) == [
        (1, "highest mean, highest peak"),
        (0, "lowest mean"),
    ]


# ---------------------------------------------------------------- sweep figures


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("metrics.steady_queue_mean_bytes", "steady-state queue, mean"),
        ("per_port.core->ep4.peak_queue_bytes", "peak queue at core->ep4"),
        ("window.per_port.core->ep4.peak_queue_bytes", "peak queue at core->ep4, in the window"),
        ("window.fairness_index", "Jain's fairness index, in the window"),
        ("window.per_source.VS.throughput_bps", "throughput of VS, in the window"),
        ("frames.dropped.total", "frames dropped, total"),
        ("flows.fct_p99_s", "99th-percentile FCT"),
        ("links[64].delay_s", "delay of links[64]"),
        ("congestion.bcn.sampling.interval_bytes", "sampling interval"),
    ],
)
def test_sweep_axes_speak_words_not_paths(path: str, words: str) -> None:
    from cnsim.plots.sweep import path_words

    assert path_words(path) == words


def test_sweep_figure_scales_seconds_and_counts_replications(tmp_path) -> None:
    spec = {
        "sweep": {
            "name": "delays",
            "base": "seed000-pause",
            "replications": 1,
            "metrics": ["latency_s.mean"],
            "grid": {"links[4].delay_s": [1e-4, 3e-4]},
            "set": {"duration_s": 0.002, "report.window_s": [0.0, 0.002]},
        }
    }
    study = cnsim.sweep(spec, out=tmp_path / "d", jobs=1, progress=False)
    from cnsim.plots.sweep import default_plots, sweep_figure

    (plot,) = default_plots(study)
    fig = sweep_figure(study, plot)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "delay of links[4] (us)"
    assert ax.get_ylabel() == "latency, mean (us)"
    assert sorted(ax.lines[0].get_xdata()) == pytest.approx([100.0, 300.0])
    assert "." not in ax.get_title().replace("...", "")  # no dotted path in the title
    from cnsim.plots import sweep as sweep_plots

    sweep_plots._save(fig, study, plot, tmp_path / "one.png", 60)
    (stamp,) = [t.get_text() for t in fig.texts]
    assert stamp.startswith("delays: 1 replication per point, base seed")


def test_a_sweep_plot_draws_a_log_x_axis_when_asked(tmp_path) -> None:
    spec = {
        "sweep": {
            "name": "delays",
            "base": "seed000-pause",
            "replications": 1,
            "metrics": ["latency_s.mean"],
            "grid": {"links[4].delay_s": [1e-5, 1e-4, 1e-3]},
            "set": {"duration_s": 0.002, "report.window_s": [0.0, 0.002]},
            "plots": [{"x": "links[4].delay_s", "y": "latency_s.mean", "xscale": "log"}],
        }
    }
    study = cnsim.sweep(spec, out=tmp_path / "d", jobs=1, progress=False)
    from cnsim.plots.sweep import sweep_figure

    (plot,) = study.spec.plots
    ax = sweep_figure(study, plot).axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "delay of links[4] (ms)"
    assert sorted(ax.lines[0].get_xdata()) == pytest.approx([0.01, 0.1, 1.0])


def test_a_unit_named_in_a_custom_label_sets_the_scale() -> None:
    from cnsim.plots.sweep import labelled_unit

    assert labelled_unit("mean FCT (s)", "fct_mean_s") == (1.0, "s")  # not ms by magnitude
    assert labelled_unit("memory per input M (KB)", "input_buffer_bytes") == (1e3, "KB")
    assert labelled_unit("throughput (KB)", "throughput_bps") is None  # not a rate's unit
    assert labelled_unit("senders under T3", "hosts") is None
