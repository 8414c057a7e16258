"""The `cnsim` command: run a preset or scenario file, run a sweep, list and show presets.

User mistakes (a bad field, an unknown preset, a missing file, a malformed --set) print one red
`error:` line on stderr and exit with status 2, never a traceback: the message from the core
already names the field at fault.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from cnsim import api
from cnsim.sweeps.keep import Keep

if TYPE_CHECKING:
    from rich.console import Console

    from cnsim import sweeps
    from cnsim.status import SweepStatusLines

USAGE_ERROR = 2
Lines = TypeVar("Lines")  # status.py's StatusLines or SweepStatusLines

app = typer.Typer(
    help="cnsim: packet-level simulator of data-center Ethernet congestion management.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals hold megabytes of arrays
)


@functools.cache
def console(*, stderr: bool = False) -> Console:
    """The terminal, stdout or stderr, made on first use: importing rich takes about 15 ms
    and `cnsim run -q` prints nothing."""
    from rich.console import Console

    return Console(stderr=stderr)


def print_line(message: str, style: str) -> None:
    """One styled line on stderr, as text: not markup, since messages hold brackets
    ("traffic[2].load") rich would eat."""
    from rich.text import Text

    console(stderr=True).print(Text(message, style=style), soft_wrap=True)


def _flags_show_no_type() -> None:
    """Recent typer prints `<bool>` beside every flag (--help, --quiet) in the help's type
    column; a flag takes no value, so show nothing there."""
    option = getattr(typer.core, "TyperOption", None)
    original = getattr(option, "display_type_rich", None)
    if option is None or original is None:
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else original(self, ctx)

    option.display_type_rich = display_type_rich


_flags_show_no_type()


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the versions of cnsim and its core, and exit.",
        ),
    ] = False,
) -> None:
    """cnsim: packet-level simulator of data-center Ethernet congestion management.

    Run a seed experiment with `cnsim run seed004-qcn`; `cnsim presets` lists them.
    """
    # No command does linear algebra, yet numpy's OpenBLAS starts a thread per core when numpy
    # loads: 60 ms of CPU, a fifth of a small run (performance.md). Before numpy is imported;
    # a value the user set wins, and sweep workers inherit it (one run per core already).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def user_error_types() -> tuple[type[BaseException], ...]:
    """The errors a user can fix (imported when needed: `cnsim --version` and shell
    completion must not wait for pandas)."""
    from cnsim.fluid.beside import FluidUnsupported
    from cnsim.sweeps.errors import SweepError

    return (
        api.ScenarioError,
        FluidUnsupported,
        api.OverrideSyntaxError,
        SweepError,
        tomllib.TOMLDecodeError,
        ImportError,
        OSError,
    )


def error_text(exc: BaseException) -> str:
    """One line for a user error; OSError's `[Errno 2]` prefix tells a user nothing."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user can fix into `error: ...` on stderr and exit status 2."""
    try:
        yield
    except Exception as exc:
        if not isinstance(exc, user_error_types()):
            raise
        print_line(f"error: {error_text(exc)}", "bold red")
        raise typer.Exit(USAGE_ERROR) from None


@contextmanager
def warnings_as_lines() -> Iterator[set[str]]:
    """Show library warnings (a skipped plot...) as one yellow line each, after the work;
    the messages the body adds to the set it is given are shown elsewhere (the run's table)."""
    shown_elsewhere: set[str] = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        yield shown_elsewhere
    for warning in caught:
        if str(warning.message) not in shown_elsewhere:
            print_line(f"warning: {warning.message}", "yellow")


def default_out_dir(name: str) -> Path:
    """runs/<scenario name>, with the name made safe for a path."""
    return Path("runs") / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "run")


def run_progress(quiet: bool, status_every: float | None) -> api.ProgressArg:
    """What a run shows while it goes: status lines when asked (`--status-every`, for logs),
    else the progress bar unless quiet."""
    if status_every is None:
        return not quiet
    from cnsim.status import StatusLines

    return status_lines(StatusLines, status_every)


def sweep_progress(quiet: bool, status_every: float | None) -> bool | SweepStatusLines:
    """What a sweep shows while it goes: `run_progress`'s choice, its lines counting runs."""
    if status_every is None:
        return not quiet
    from cnsim.status import SweepStatusLines

    return status_lines(SweepStatusLines, status_every)


def status_lines(kind: Callable[[float], Lines], status_every: float) -> Lines:
    """`kind(status_every)`, a status.py class; an interval that is no positive number of
    seconds refused as a bad --status-every (exit status 2, before anything runs)."""
    try:
        return kind(status_every)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--status-every") from None


@app.command()
def run(
    scenario: Annotated[
        str, typer.Argument(metavar="SCENARIO", help="Preset name or scenario TOML file.")
    ],
    out: Annotated[  # text, not Path: Path("") would silently mean the working directory
        str | None, typer.Option("--out", "-o", help="Output directory (default: runs/NAME).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed (replaces the scenario's).")] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            "-s",
            metavar="PATH=VALUE",
            help="Override a field, e.g. --set traffic[0].load=0.3 (repeatable).",
        ),
    ] = None,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the PNG figures.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = False,
    fluid: Annotated[
        bool,
        typer.Option(
            "--fluid",
            help="Also the scheme's fluid model (DCQCN, QCN, DCTCP; one bottleneck): fluid.json, "
            "fluid.csv, its time course dashed on the figures, its numbers beside the run's.",
        ),
    ] = False,
    status_every: Annotated[
        float | None,
        typer.Option(
            "--status-every",
            metavar="SECONDS",
            help="Print a status line to stderr every SECONDS of wall time (share simulated, "
            "time elapsed and left), for logs and batch jobs; no progress bar then.",
        ),
    ] = None,
) -> None:
    """Run a scenario and write scenario.toml, summary.json, timeseries.parquet, plots/."""
    from cnsim import outputs
    from cnsim.sweeps.folders import check_no_file_in_path

    with user_errors(), warnings_as_lines() as in_table:
        progress = run_progress(quiet, status_every)
        if out is not None:  # a directory cnsim must not write into fails before the run
            outputs.check_out_dir(out)
        if fluid:  # a scenario no fluid model covers fails before the run
            from cnsim.fluid import beside, show

            beside.covered(tomllib.loads(api.resolve(scenario, seed=seed, set=overrides)))
        out_dir = (
            Path(out)
            if out is not None
            else default_out_dir(api.scenario_name(scenario, set=overrides))
        )
        check_no_file_in_path(out_dir, "output directory")  # not mkdir's "File exists"
        try:
            # Streamed: the time series and flow records go to their files as the run goes.
            result = api.run_to_dir(
                scenario, out_dir, seed=seed, set=overrides, progress=progress, plots=not no_plots
            )
            if not quiet:  # the run's table shows its analysis warnings, in red
                in_table.update(result.warnings)
        except KeyboardInterrupt:
            print_line(RUN_INTERRUPTED, "yellow")
            raise typer.Exit(130) from None
        model = show.write_beside(result, out_dir, plots=not no_plots) if fluid else None
    if not quiet:
        from cnsim import terminal  # rich: only when something is drawn

        console().print(terminal.summary_table(result, out_dir))
        window = terminal.window_table(result.summary)
        if window is not None:
            console().print(window)
        if model is not None:
            console().print(show.rich_table(model, result))


@app.command()
def trace(
    scenario: Annotated[
        str, typer.Argument(metavar="SCENARIO", help="Preset name or scenario TOML file.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Trace file to write: CSV, or Parquet (.parquet).")
    ],
    seed: Annotated[int | None, typer.Option(help="Seed (replaces the scenario's).")] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", "-s", metavar="PATH=VALUE", help="Override a field (repeatable)."),
    ] = None,
) -> None:
    """Write the flows a scenario's workload starts as a trace (start_s,src,dst,size_bytes,
    priority); a kind = "flow_trace" entry reading it repeats those flows exactly. saturate,
    cbr and bernoulli sources are not flows and are not in the trace (a warning names them)."""
    with user_errors(), warnings_as_lines():
        n = api.trace(scenario, out, seed=seed, set=overrides)
    empty = " (an empty trace: the columns only)" if n == 0 else ""
    console().print(f"{n:,} flows written to {out}{empty}")


INTERRUPTED = "interrupted: finished runs are saved; the same command resumes the sweep"
RUN_INTERRUPTED = "interrupted: nothing was written (an earlier run's directory is unchanged)"


@app.command()
def sweep(
    spec: Annotated[
        str, typer.Argument(metavar="SWEEP", help="Sweep preset name or sweep TOML file.")
    ],
    out: Annotated[  # text: Path("") would silently mean the working directory
        str | None,
        typer.Option("--out", "-o", help="Study directory (default: runs/NAME); reruns resume."),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", min=1, help="Local worker processes (default: all cores)."),
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(help="Run on this Dask scheduler (tcp://host:8786); needs the dask extra."),
    ] = None,
    keep: Annotated[
        Keep, typer.Option(help="Per-run files kept: none, summary, or full (+ time series).")
    ] = Keep.summary,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the PNG figures.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or table.")] = False,
    status_every: Annotated[
        float | None,
        typer.Option(
            "--status-every",
            metavar="SECONDS",
            help="Print a status line to stderr every SECONDS of wall time (runs done of all, "
            "time elapsed and left), for logs and batch jobs; no progress bar then.",
        ),
    ] = None,
) -> None:
    """Run every point x replication of a sweep; write runs.parquet, runs/<key>/, plots/.

    Exits with status 1 when some runs failed (their errors are in runs.parquet); running the
    same command again retries them and skips every run that finished.
    """
    from cnsim import sweeps, terminal
    from cnsim.sweeps import execute

    with user_errors(), warnings_as_lines():
        progress = sweep_progress(quiet, status_every)
        if jobs is not None and dask:  # checked before connecting to the cluster
            raise sweeps.SweepError("--jobs and --dask exclude each other (the cluster decides)")
        client = execute.connect(dask) if dask else None
        try:
            study = sweeps.sweep(
                spec, out=out, jobs=jobs, client=client, keep=keep, progress=progress
            )
        except KeyboardInterrupt:
            print_line(INTERRUPTED, "yellow")
            raise typer.Exit(130) from None
        finally:
            if client is not None:
                client.close()
        if not no_plots:
            study.plot()
    if not quiet:
        console().print(terminal.sweep_table(study))
    if len(study.failed):
        print_line(failures_line(study), "bold red")
        raise typer.Exit(1)


def failures_line(study: sweeps.SweepResult) -> str:
    """How many runs failed and the first one's error (all are in runs.parquet)."""
    first = study.failed.iloc[0]
    return (
        f"error: {len(study.failed)} of {len(study.runs)} runs failed; "
        f"run {first['key']}: {first['error']}"
    )


@app.command()
def report(
    directory: Annotated[
        str, typer.Argument(metavar="DIR", help="A run's or a sweep's output directory.")
    ],
    out: Annotated[
        str | None, typer.Option("--out", "-o", help="HTML file (default: DIR/report.html).")
    ] = None,
    html: Annotated[
        bool, typer.Option("--html", help="Write one self-contained HTML file instead.")
    ] = False,
) -> None:
    """Show a saved run's or sweep's tables again, or (--html) write them with the figures,
    the flow statistics and the resolved scenario into one HTML file that opens offline."""
    with user_errors(), warnings_as_lines():
        if html:
            from cnsim.report_html import write_report

            written = write_report(directory, out)
            console().print(f"report written to {written}")
            return
        if out is not None:
            raise typer.BadParameter(
                "--out names the HTML file: give --html too", param_hint="--out"
            )
        _print_saved(Path(directory))


def _print_saved(folder: Path) -> None:
    """The tables `cnsim run` or `cnsim sweep` printed, from the saved directory."""
    from cnsim import terminal
    from cnsim.report_html import load_saved  # what --html reads, with the same errors
    from cnsim.sweeps.result import SweepResult

    result = load_saved(folder)
    if isinstance(result, SweepResult):
        console().print(terminal.sweep_table(result))
        return
    console().print(terminal.summary_table(result, folder))
    window = terminal.window_table(result.summary)
    if window is not None:
        console().print(window)


@app.command()
def presets() -> None:
    """List the presets (the seed experiments) with one-line descriptions."""
    with user_errors():
        found = api.presets()
    if not found:
        console().print("no presets installed")
        return
    from rich.table import Table

    table = Table("preset", "description", title="cnsim presets")
    for name, description in found.items():
        table.add_row(name, description)
    console().print(table)


@app.command()
def show(
    name: Annotated[
        str, typer.Argument(metavar="SCENARIO", help="Preset name or scenario TOML file.")
    ],
    resolved: Annotated[
        bool, typer.Option("--resolved", help="Show it with every default filled in.")
    ] = False,
) -> None:
    """Print a preset's TOML (redirect it to a file to start your own scenario)."""
    with user_errors():
        text = api.resolve(name) if resolved else api.load_scenario(name)
    if console().is_terminal:
        from rich.syntax import Syntax  # pygments: only `show` needs it

        console().print(Syntax(text, "toml", background_color="default"))
    else:
        typer.echo(text, nl=not text.endswith("\n"))


@app.command()
def schema(
    summary: Annotated[
        bool, typer.Option("--summary", help="The schema of summary.json instead.")
    ] = False,
    sweep: Annotated[
        bool, typer.Option("--sweep", help="The schema of sweep files instead.")
    ] = False,
) -> None:
    """Print the JSON Schema of scenario files (for editors and jsonschema), of summary.json
    (--summary) or of sweep files (--sweep).

    Scenarios and sweeps are TOML; the schema applies to their parsed form. Semantic rules the
    schema cannot express (names that must exist, xon < xoff, a plot's x must be swept...) are
    still checked by `cnsim run` and `cnsim sweep`.
    """
    import json

    if summary and sweep:
        raise typer.BadParameter("give --summary or --sweep, not both", param_hint="--sweep")
    with user_errors():
        if sweep:
            from cnsim.sweeps.spec import sweep_file_schema

            document = sweep_file_schema()
        else:
            document = api.summary_schema() if summary else api.scenario_schema()
    typer.echo(json.dumps(document, indent=2))


def version_text() -> str:
    from cnsim import __version__

    core = api.native_version() or "not built"
    return f"cnsim {__version__} (core {core})"


@app.command()
def version() -> None:
    """Print the versions of the Python package and of the Rust core."""
    typer.echo(version_text())


if __name__ == "__main__":
    app(prog_name="cnsim")
