"""A shareable report: one self-contained HTML file of a saved run or sweep (`cnsim report DIR
--html`), to mail or attach, that opens offline in any browser.

A run's report holds what `cnsim run` prints (headline numbers first, warnings, the summary
lines, the window table), the per-source and per-port tables, the flow statistics by size, every
figure, and the resolved scenario that repeats the run. A sweep's holds its table (as `cnsim
sweep` prints it), its figures and its sweep file and base scenario. Figures are PNG inlined as
base64, styles are inline: the file needs nothing beside it. The lines and tables are
`readout`'s, rendered by the notebook's HTML helpers, so the three places read the same.
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cnsim import notebook, readout
from cnsim.outputs import REPORT_FILE, SUMMARY_FILE
from cnsim.sweeps.folders import check_no_file_in_path
from cnsim.sweeps.store import BASE_FILE, SPEC_FILE, TABLE_FILE

if TYPE_CHECKING:
    from cnsim.result import Result
    from cnsim.sweeps.result import SweepResult

FIGURE_DPI = 100
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { padding: 2px 10px; border-bottom: 1px solid #eee; vertical-align: top; }
thead th { background: #f4f4f4; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.8em; }
figure { margin: 1em 0; } figcaption { font-weight: bold; font-size: 0.9em; }
"""


def write_report(run_or_sweep_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the HTML report of a run directory (`cnsim run --out DIR`) or a sweep directory
    (`cnsim sweep --out DIR`) to `out` (default DIR/report.html) and return its path."""
    folder = Path(run_or_sweep_dir)
    target = Path(out) if out is not None else folder / REPORT_FILE
    from cnsim.sweeps.result import SweepResult

    saved = load_saved(folder)
    check_no_file_in_path(target.parent, "report folder")  # before the figures are drawn
    page = sweep_page(saved) if isinstance(saved, SweepResult) else run_page(saved)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target


def load_saved(folder: Path) -> Result | SweepResult:
    """The run or sweep saved in `folder` (what `cnsim report` shows); FileNotFoundError
    saying what `folder` is instead: missing, neither, or a sweep interrupted before it
    wrote its table (the same `cnsim sweep` command resumes it)."""
    if (folder / TABLE_FILE).is_file() or (folder / SPEC_FILE).is_file():
        from cnsim.sweeps.result import SweepResult

        return SweepResult.load(folder)
    if (folder / SUMMARY_FILE).is_file():
        from cnsim.result import Result

        return Result.load(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such directory")
    raise FileNotFoundError(
        f"{folder}: not a cnsim run or sweep directory (no summary.json, no runs.parquet)"
    )


def run_page(result: Result) -> str:
    """The report of one run, as a whole HTML document."""
    summary = result.summary
    title = f"cnsim: {result.name} (seed {summary.get('seed')})"
    description = result.scenario.get("description", "")
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{html.escape(description)}</p>" if description else "",
        "<h2>Summary</h2>",
        notebook.lines_html(readout.run_lines(result)),
        *(notebook.table_html(table, "h3") for table in notebook.run_tables(summary)),
        _flow_table(result),
        "<h2>Figures</h2>",
        *(_figure(name, img) for name, img in notebook.figure_imgs(result, FIGURE_DPI)),
        "<h2>Resolved scenario</h2>",
        "<p>Every default filled in: <code>cnsim run scenario.toml</code> repeats the run.</p>",
        f"<pre>{html.escape(result.scenario_toml)}</pre>",
    ]
    return _document(title, parts)


def sweep_page(study: SweepResult) -> str:
    """The report of a sweep: its table, its figures (drawn now when the study has none), its
    sweep file and base scenario."""
    table = readout.sweep_table(study)
    description = study.spec.description
    parts = [
        f"<h1>{html.escape(table.title)}</h1>",
        f"<p>{html.escape(description)}</p>" if description else "",
        "<h2>Table</h2>",
        notebook.table_html(table._replace(title="")),
        "<h2>Figures</h2>",
        *_sweep_figures(study),
        "<h2>Sweep file</h2>",
        f"<pre>{html.escape(_read(study.out_dir / SPEC_FILE))}</pre>",
        "<h2>Base scenario</h2>",
        f"<pre>{html.escape(_read(study.out_dir / BASE_FILE))}</pre>",
    ]
    return _document(table.title, parts)


def _sweep_figures(study: SweepResult) -> list[str]:
    """The study's figures when they are its current ones, else drawn now from its results:
    never a figure of older results (a re-run with --no-plots) or a file it did not draw."""
    pngs = sorted(study.figures())
    if pngs:
        return [_figure(p.stem, notebook.png_img(p.read_bytes(), p.stem)) for p in pngs]
    with tempfile.TemporaryDirectory() as tmp:  # --no-plots, stale figures, an older store
        drawn = study.plot(Path(tmp), dpi=FIGURE_DPI)
        return [_figure(p.stem, notebook.png_img(p.read_bytes(), p.stem)) for p in drawn]


def _flow_table(result: Result) -> str:
    """Flow statistics per size bin (the numbers of the fct_by_size figure)."""
    flows = result.flows
    if flows.empty or not bool(flows["completed"].astype(bool).any()):
        return ""
    from cnsim.plots.flows import fct_by_size

    done = flows[flows["completed"].astype(bool)]
    by_size = fct_by_size(done)
    columns = ["flow size", "flows", "mean FCT", "p99 FCT", "mean slowdown"]
    bins: list[Any] = by_size.index.to_list()  # pandas Intervals of bytes
    sizes = [f"{readout.bytes_text(b.left)} - {readout.bytes_text(b.right)}" for b in bins]
    rows = [
        [
            readout.Cell(size),
            readout.Cell(readout.count_text(int(row["flows"]))),
            readout.Cell(readout.seconds_text(float(row["fct_mean_s"]))),
            readout.Cell(readout.seconds_text(float(row["fct_p99_s"]))),
            readout.Cell(readout.number_text(float(row["slowdown_mean"]))),
        ]
        for size, (_, row) in zip(sizes, by_size.iterrows(), strict=True)
    ]
    caption = f"{len(done):,} of {len(flows):,} started flows completed; FCT by flow size"
    table = readout.TextTable("flows by size", columns, rows, caption, frozenset({"flow size"}))
    return notebook.table_html(table, "h3")


def _figure(name: str, img: str) -> str:
    return f"<figure><figcaption>{html.escape(name)}</figcaption>{img}</figure>"


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else "(not in the study directory)"


def _document(title: str, parts: list[str]) -> str:
    body = "\n".join(part for part in parts if part)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )
