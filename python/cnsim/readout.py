"""What a run and a sweep say, as plain text: one formatter for every place that shows them.

The terminal (`terminal.py`, through rich), the notebook (`notebook.py`) and the HTML report
(`report_html.py`) all show the lines and tables made here, so a number reads the same
everywhere: rates in b/s with a prefix ("64.2 Mb/s"), sizes in B/KB/MB, times in ns/us/ms/s,
chosen from the unit in a key's name (units in names, the project's style), and hosts and ports
in natural order (h2 before h10).

Pure Python: no rich, no pandas at import (a sweep's tables import what the sweep result has).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from cnsim import headline
from cnsim.outputs import (
    FLOWS_FILE,
    PLOTS_DIR,
    SCENARIO_FILE,
    SUMMARY_FILE,
    TIMESERIES_FILE,
    window_rows,
)

if TYPE_CHECKING:
    from cnsim.result import Result
    from cnsim.sweeps.result import SweepResult

MAX_TABLE_ROWS = 40
MAX_VALUE_CHARS = 40


# ---------------------------------------------------------------- numbers as text


def number_text(value: Any) -> str:
    """A number with four significant digits (thousands separated for integers); None '-'."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != value:  # NaN: not measured
        return "-"
    return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"


def count_text(value: Any) -> str:
    """An integer count with thousands separators."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _scaled(value: float, units: tuple[tuple[float, str], ...], base: str) -> str:
    """`value` in the largest unit it reaches, three significant digits ("64.2 Mb/s")."""
    for scale, unit in units:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} {base}"


def rate_text(bps: Any) -> str:
    """A rate in bit/s: '50.7 Gb/s', '64.2 Mb/s', '0 b/s'."""
    if not _finite(bps):
        return number_text(bps)
    return _scaled(float(bps), ((1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")), "b/s")


def bytes_text(n_bytes: Any) -> str:
    """A size: '1.23 MB', '150 KB', '64 B' (decimal prefixes, as the seeds write KB)."""
    if not _finite(n_bytes):
        return number_text(n_bytes)
    return _scaled(float(n_bytes), ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")), "B")


def seconds_text(seconds: Any) -> str:
    """A time: '300 us', '1.5 ms', '9 s', '250 ns'."""
    if not _finite(seconds):
        return number_text(seconds)
    value = float(seconds)
    if value == 0 or abs(value) >= 1.0:
        return f"{value:.4g} s"
    for scale, unit in ((1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.3e} s"


def value_text(name: str, value: Any) -> str:
    """A value as text in the unit its name carries: `_bps` a rate, `_bytes` a size, `_s` a
    time; anything else a plain number (fractions, counts, indices)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-" if value is None else str(value)
    if name.endswith("_bps"):
        return rate_text(value)
    if name.endswith("_bytes"):
        return bytes_text(value)
    if name.endswith("_s"):
        return seconds_text(value)
    return number_text(value)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the digits in names as numbers: h2 before h10, sw->h9 before
    sw->h10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part
    )


def natural_order(names: Any) -> list[str]:
    """`names` sorted by `natural_key`."""
    return sorted((str(n) for n in names), key=natural_key)


# ---------------------------------------------------------------- a run's lines


class Line(NamedTuple):
    """One line of a run's summary: what it is, its value as text, whether it reports a fault
    (drawn in red) and whether it is a headline number (drawn first, emphasised)."""

    label: str
    text: str
    alert: bool = False
    headline: bool = False


def run_lines(result: Result, out_dir: Path | None = None) -> list[Line]:
    """Everything a run says, in reading order: its headline numbers, what the analysis warned
    about (in red, next to the numbers it concerns: a statistic on too few samples is no
    statistic), then the summary lines."""
    s = result.summary
    warned = [Line("warning", text, alert=True) for text in result.warnings]
    return headline_lines(result.scenario, result.summary) + warned + summary_lines(s, out_dir)


def headline_lines(scenario: Mapping[str, Any], summary: Mapping[str, Any]) -> list[Line]:
    """The experiment's headline numbers (`cnsim.headline`), each read against its reference:
    'victim VS -> VR: 9.79 Gb/s = 0.49 x max-min fair share (20 Gb/s)'."""
    lines = []
    for entry in headline.declared(scenario):
        found = headline.value(summary, entry)
        text = value_text(entry.unit_name, found)
        if entry.reference is not None:
            reference = value_text(entry.unit_name, entry.reference)
            if _finite(found) and entry.reference:
                ratio = found / entry.reference
                text += f" = {ratio:.2f} x {entry.reference_label} ({reference})"
            else:
                text += f" ({entry.reference_label}: {reference})"
        lines.append(Line(entry.label, text, headline=True))
    return lines


def summary_lines(s: Mapping[str, Any], out_dir: Path | None = None) -> list[Line]:
    """The summary's lines: cost, frame accounting by place, latency, control frames, PFC,
    flows, the scalar metrics and (given `out_dir`) the files written."""
    lines = _cost_lines(s) + _frame_lines(s) + _control_lines(s) + _pfc_lines(s)
    lines += _load_scaling_lines(s) + _flow_lines(s)
    lines += _metric_lines(s.get("metrics", {}))
    if out_dir is not None:
        lines.append(Line("outputs", _outputs_text(out_dir)))
    return lines


def _cost_lines(s: Mapping[str, Any]) -> list[Line]:
    return [
        Line("simulated", seconds_text(s.get("sim_time_s"))),
        Line("wall time", seconds_text(s.get("wall_time_s"))),
        Line("events", f"{count_text(s.get('events'))} ({_per_second(s.get('events_per_s'))})"),
    ]


def _per_second(value: Any) -> str:
    if not _finite(value):
        return f"{value} events/s"
    return _scaled(float(value), ((1e9, "G"), (1e6, "M"), (1e3, "k")), "").strip() + " events/s"


def _frame_lines(s: Mapping[str, Any]) -> list[Line]:
    frames = s.get("frames", {})
    dropped = dict(frames.get("dropped", {}))
    total = dropped.pop("total", sum(v for v in dropped.values() if isinstance(v, int | float)))
    places = ", ".join(f"{k} {count_text(v)}" for k, v in dropped.items() if v)
    lines = [
        Line("frames generated", count_text(frames.get("generated"))),
        Line("frames delivered", count_text(frames.get("delivered"))),
        Line("frames dropped", count_text(total) + (f" ({places})" if places else "")),
        Line("frames in flight", count_text(frames.get("in_flight"))),
    ]
    if frames.get("conserved") is False:  # the core's own check failed: say so loudly
        broken = "VIOLATED: generated != delivered + dropped + in flight"
        lines.append(Line("conservation", broken, alert=True))
    latency = s.get("latency_s")
    if isinstance(latency, Mapping) and latency:
        text = f"mean {seconds_text(latency.get('mean'))}, max {seconds_text(latency.get('max'))}"
        lines.append(Line("latency", text))
    return lines


def _control_lines(s: Mapping[str, Any]) -> list[Line]:
    control = dict(s.get("control_frames", {}))
    bandwidth = control.pop("bandwidth_bps", None)
    control.pop("bytes", None)
    kinds = ", ".join(f"{k} {count_text(v)}" for k, v in control.items() if v) or "none"
    if isinstance(bandwidth, int | float) and bandwidth:
        kinds += f" ({rate_text(bandwidth)})"
    return [Line("control frames", kinds)]


def _pfc_lines(s: Mapping[str, Any]) -> list[Line]:
    """One line per PFC class: why it fired or not (the core words it)."""
    pfc = s.get("pfc")
    if not isinstance(pfc, Mapping):
        return []
    classes = pfc.get("classes", {})
    return [Line(f"pfc class {c}", str(v.get("why", ""))) for c, v in classes.items()]


def _load_scaling_lines(s: Mapping[str, Any]) -> list[Line]:
    """One line per `load_basis = "busiest_link"` entry: the link and the hosts' load."""
    return [
        Line(
            f"traffic[{row.get('traffic')}] load",
            f"busiest link {row.get('busiest_link')} at "
            f"{number_text(row.get('busiest_link_load'))}: "
            f"hosts at {number_text(row.get('host_load'))} of their line rate "
            f"(the link carries {number_text(row.get('busiest_link_load_at_full_rate'))} x "
            "at full host rate)",
        )
        for row in s.get("load_scaling") or []
        if isinstance(row, Mapping)
    ]


def _flow_lines(s: Mapping[str, Any]) -> list[Line]:
    """Flows started/completed and FCT, with the realised size and load beside the asked."""
    f = s.get("flows")
    if not f:
        return []
    done = f"{count_text(f.get('completed'))} of {count_text(f.get('started'))} completed"
    lost = f.get("with_drops")
    if isinstance(lost, int) and lost > 0:
        # Without a transport a flow that lost a frame never completes; with one it may.
        done += f"; {count_text(lost)} lost a frame"
    lines = [
        Line("flows", done),
        Line(
            "flow completion",
            f"mean {seconds_text(f.get('fct_mean_s'))}, "
            f"p50 {seconds_text(f.get('fct_p50_s'))}, p99 {seconds_text(f.get('fct_p99_s'))}; "
            f"slowdown {number_text(f.get('slowdown_mean'))}",
        ),
    ]
    asked = f.get("requested_size_mean_bytes")
    if asked is not None:
        lines.append(Line("flow workload", _workload_text(f, asked)))
    return lines


def _workload_text(f: Mapping[str, Any], asked: Any) -> str:
    """What the `kind = "flows"` entries drew beside what they asked; the mean of every started
    flow too when incasts, traces or long flows are among them (it is not what was asked)."""
    drawn = f.get("generated_size_mean_bytes", f.get("size_mean_bytes"))
    text = (
        f"mean size {bytes_text(drawn)} (asked {bytes_text(asked)}), "
        f"load {number_text(f.get('load'))} (asked {number_text(f.get('requested_load'))})"
    )
    generated, started = f.get("generated"), f.get("started")
    if isinstance(generated, int) and isinstance(started, int) and started > generated:
        text += f"; with the other flows, mean size {bytes_text(f.get('size_mean_bytes'))}"
    return text


def _metric_lines(metrics: Mapping[str, Any]) -> list[Line]:
    lines = []
    for name, value in metrics.items():
        if isinstance(value, Mapping | list):
            continue  # tables belong in summary.json, not in a one-line summary
        lines.append(Line(name, value_text(name, value)))
    return lines


def _outputs_text(out_dir: Path) -> str:
    names = [SCENARIO_FILE, SUMMARY_FILE, TIMESERIES_FILE]
    if (out_dir / FLOWS_FILE).exists():
        names.append(FLOWS_FILE)
    n_plots = len(list((out_dir / PLOTS_DIR).glob("*.png")))
    if n_plots:
        names.append(f"{PLOTS_DIR}/ ({n_plots} PNG)")
    return f"{out_dir}/  " + ", ".join(names)


# ---------------------------------------------------------------- tables


class Cell(NamedTuple):
    """One cell of a table as text; `alert` cells report a fault (drawn in red)."""

    text: str
    alert: bool = False


class TextTable(NamedTuple):
    """A table as text cells: the terminal draws it with rich, the notebook and the HTML report
    as an HTML table. `left` names the columns read as labels (left-aligned)."""

    title: str
    columns: list[str]
    rows: list[list[Cell]]
    caption: str = ""
    left: frozenset[str] = frozenset()


def window_table(summary: Mapping[str, Any]) -> TextTable | None:
    """The window table (window_per_source.csv) with the window's totals as a caption."""
    rows = window_rows(summary)
    if not rows:
        return None
    w = summary["window"]
    title = f"window {w['start_s'] * 1e3:g}-{w['end_s'] * 1e3:g} ms, per source"
    columns = ["source", "throughput", "generated", "transmitted", "dropped at source"]
    cells = [
        [
            Cell(str(row["source"])),
            Cell(rate_text(row["throughput_gbps"] * 1e9)),
            Cell(count_text(row["frames_generated"])),
            Cell(count_text(row["frames_transmitted"])),
            Cell(count_text(row["frames_dropped_at_source"])),
        ]
        for row in sorted(rows, key=lambda r: natural_key(str(r["source"])))
    ]
    caption = (
        f"frames generated {count_text(w.get('frames_generated'))}, "
        f"received {count_text(w.get('frames_received'))}; "
        f"fairness index {number_text(w.get('fairness_index'))}"
    )
    return TextTable(title, columns, cells, caption, frozenset({"source"}))


def summary_rows_table(
    rows: Any, columns: list[str], title: str, key: str, max_rows: int = MAX_TABLE_ROWS
) -> TextTable | None:
    """A summary map {name: {field: value}} (per_source, per_port) as a table: rows in natural
    order, the `columns` present, values in the units their names carry."""
    if not isinstance(rows, Mapping) or not rows:
        return None
    present = [c for c in columns if any(c in row for row in rows.values())]
    names = natural_order(rows)
    cells = [
        [Cell(name), *(Cell(value_text(c, rows[name].get(c))) for c in present)]
        for name in names[:max_rows]
    ]
    caption = f"... {len(names) - max_rows} more rows" if len(names) > max_rows else ""
    return TextTable(title, [key, *present], cells, caption, frozenset({key}))


# ---------------------------------------------------------------- a sweep


def sweep_table(study: SweepResult) -> TextTable:
    """Per point: the swept values, runs ok, and each metric's mean +- 95 % CI half-width.

    A sweep with a [sweep.table] shows that table (the columns of DIR/table.csv, swept values
    by their [sweep.names]); a transient study shows its transient table (`transient_table`).
    """
    if study.spec.transient is not None:
        return transient_table(study)
    if study.spec.table:
        return _point_table(study)
    stats = study.aggregate().set_index(["point", "metric"])
    metrics = list(dict.fromkeys(stats.index.get_level_values("metric")))
    columns = [*study.parameters, "runs ok", *metrics]
    rows: list[list[Cell]] = []
    params_of = {point.index: point.params for point in study.spec.points()}
    few = _FewSamples(study)
    for point, runs in study.runs.groupby("point", sort=True):
        index = cast(int, point)  # the point column holds ints
        if index >= MAX_TABLE_ROWS:
            rows.append([Cell("...")] * len(columns))
            break
        values = params_of[index]
        params = [Cell(value_cell(study, p, values.get(p))) for p in study.parameters]
        n_ok = int((runs["status"] == "ok").sum())
        cells = [
            few.cell(index, m, mean_ci_text(_leaf(m), *stats.loc[(point, m), ["mean", "ci95"]]))
            for m in metrics
        ]
        rows.append([*params, Cell(f"{n_ok}/{len(runs)}"), *cells])
    caption = f"{study.out_dir}/  runs.parquet, sweep.toml, runs/<key>/" + few.caption()
    return TextTable(_title(study), columns, rows, caption, frozenset(study.parameters))


class _FewSamples:
    """Marks a sweep table's cells that rest on a window of too few probe samples: the
    steady_*/transient_* metrics of a point whose runs warned so (`SweepResult.few_samples`);
    an error cell unless the sweep says `few_samples = "warn"` (then the value, marked)."""

    def __init__(self, study: SweepResult) -> None:
        self.found = study.few_samples()
        self.warn = study.spec.few_samples == "warn"
        self.runs = study.ok.groupby("point").size().to_dict()
        self.marked = False

    def cell(self, point: int, path: str, text: str) -> Cell:
        """The cell of `path` at `point`: `text`, or marked."""
        entry = self.found.get(point)
        if entry is None or not any(_leaf(path).startswith(f"{k}_") for k in entry[1]):
            return Cell(text)
        self.marked = True
        if self.warn:
            return Cell(f"{text} *", alert=True)
        return Cell(f"too few samples ({entry[0]}/{self.runs.get(point, 0)} runs)", alert=True)

    def caption(self) -> str:
        if not self.marked:
            return ""
        what = "*" if self.warn else "red cells"
        return (
            f"; {what}: a steady or transient window of too few probe samples "
            "(runs.parquet's warnings; lengthen the runs, or shorten the window)"
        )


def _leaf(path: str) -> str:
    """The last key of a metric path: the name that carries the unit."""
    return re.split(r"[.\[]", path)[-1]


def _title(study: SweepResult) -> str:
    title = f"cnsim sweep: {study.spec.name} ({len(study.ok)}/{len(study.runs)} runs ok"
    return title + f"; {study.executed} run now, {study.reused} reused)"


def value_cell(study: SweepResult, parameter: str, value: Any) -> str:
    """A swept value as a cell: its [sweep.names] name, or the value cut to a readable length
    (a list-valued parameter, such as a traffic list, would fill the screen)."""
    text = str(study.spec.value_name(parameter, value))
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def _point_table(study: SweepResult) -> TextTable:
    """The [sweep.table] as DIR/table.csv holds it: replication means per point, `n` runs."""
    data = study.point_table()
    shown = [c for c in data.columns if c != "point"]
    if study.spec.fluid is not None:  # the fluid columns would not fit: a few, the rest in CSV
        from cnsim.sweeps.fluid import PRINTED

        shown = [c for c in shown if c in study.spec.table or c == "n" or c in PRINTED]
    few = _FewSamples(study)
    rows: list[list[Cell]] = []
    for i, (_, row) in enumerate(data.iterrows()):
        if i >= MAX_TABLE_ROWS:
            rows.append([Cell("...")] * len(shown))
            break
        point = int(row["point"])
        paths = study.spec.table
        rows.append([few.cell(point, paths.get(c, c), table_number(c, row[c])) for c in shown])
    caption = f"{study.out_dir}/  table.csv, runs.parquet, sweep.toml, runs/<key>/"
    return TextTable(_title(study), shown, rows, caption + few.caption())


def table_number(column: str, value: Any) -> str:
    """A cell of a point table: a swept value as given (its name, or an int such as a memory
    size), a mean in the unit its column name carries; NaN (no finished run) '-'."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return value_text(column, value)


def mean_ci_text(name: str, mean: float, ci: float) -> str:
    """'12.3 KB +- 1.1 KB': a mean and its 95 % CI half-width in the unit of `name`."""
    if mean != mean:  # NaN: no finished run reported it
        return "-"
    if ci != ci:
        return value_text(name, mean)
    return f"{value_text(name, mean)} +- {value_text(name, ci)}"


def transient_table(study: SweepResult) -> TextTable:
    """A transient study (seed 001): per point its label columns, the replications averaged,
    the transient found on their mean (ms and RTTs), and any reference columns beside it.

    Durations (columns ending in `_s`) are shown in ms, sizes (`_bytes`) in KB.
    """
    table_data = study.transient_table()
    shown = [c for c in table_data.columns if c not in ("point", "transient_end_s", "method")]
    headers = []
    for column in shown:
        header = column
        if column.endswith("_s"):
            header = f"{column[:-2]} (ms)"
        elif column.endswith("_bytes"):
            header = f"{column[:-6]} (KB)"
        headers.append(header)
    rows: list[list[Cell]] = []
    few = _FewSamples(study)
    for _, row in table_data.iterrows():
        cells = [_transient_cell(column, row[column]) for column in shown]
        if row["settled"] is False:  # a lower bound: the series had not settled
            for column in ("transient_s", "transient_rtt"):
                cells[shown.index(column)] = ">= " + cells[shown.index(column)]
        point = int(row["point"])
        rows.append([few.cell(point, c, text) for c, text in zip(shown, cells, strict=True)])
    method = table_data["method"].iloc[0] if len(table_data) else "-"
    caption = (
        f"initial data deletion on the replication mean, knee rule {method!r}; "
        f"{study.out_dir}/transient.csv" + few.caption()
    )
    return TextTable(_title(study), headers, rows, caption, frozenset({"case"}))


def _transient_cell(column: str, value: object) -> str:
    if column.endswith("_bytes") and isinstance(value, int | float) and value == value:
        return f"{value / 1e3:g}"
    if isinstance(value, float):
        if value != value:  # NaN: not measured (no run finished, or no reference)
            return "-"
        if column.endswith("_s"):
            ms = value * 1e3
            return f"{ms:.0f}" if abs(ms) >= 100 else f"{ms:.3g}"
        return f"{value:.4g}"
    return str(value)
