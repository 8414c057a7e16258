"""The one progress bar (`cnsim.terminal.progress_bar`) that `cnsim run`, `cnsim.run(...,
progress=True)`, sweeps and notebooks share: rich's bar on a terminal, an HTML bar in a
Jupyter cell, nothing anywhere else; a run's simulated fraction, or a sweep's runs counted."""

from __future__ import annotations

import io
import re
import sys
import tomllib
import types
from typing import Any

import pytest
from rich.console import Console

import cnsim
from cnsim import terminal
from conftest import small_run

SMALL = small_run("probe_interval_s = 1e-4")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def tiny_sweep() -> dict[str, Any]:
    """Two 1 ms runs of the smallest scenario, as a sweep dict."""
    return {
        "sweep": {"name": "tiny", "replications": 2, "seed": 1},
        "scenario": tomllib.loads(SMALL),
    }


def frames(written: str) -> list[str]:
    """The lines a terminal showed, one per redraw, without escape codes."""
    lines = (ANSI.sub("", part).rstrip() for part in re.split(r"[\r\n]", written))
    return [line for line in lines if line.strip()]


def tty() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=100, color_system=None)


# ---------------------------------------------------------------- on a terminal


def test_a_run_shows_the_fraction_done_clamped_then_erases_the_bar() -> None:
    console = tty()
    with terminal.progress_bar("simulating", console=console) as bar:
        for fraction in (-1.0, 0.5, 2.0):
            bar.update(fraction)
    written = console.file.getvalue()  # type: ignore[attr-defined]
    shown = frames(written)
    assert re.fullmatch(r"simulating +0% 0:00:00", shown[0])
    assert re.fullmatch(r"simulating ━+ 100% 0:00:\d\d", shown[-1])
    assert written.endswith("\x1b[1A\x1b[2K")  # transient: the run's summary takes its place


def test_a_sweep_counts_runs_and_failures_and_keeps_the_bar() -> None:
    console = tty()
    with terminal.progress_bar("sweep tiny", total=3, console=console) as bar:
        for failed in (False, True, False):
            bar.advance(failed=failed)
    written = console.file.getvalue()  # type: ignore[attr-defined]
    last = frames(written)[-1]
    assert re.fullmatch(r"sweep tiny ━+ 3/3 [\d.]+ runs/s 0:00:\d\d eta 0:00:00 1 failed", last)
    assert (bar.done, bar.failed) == (3, 1)
    assert written.endswith("\n\x1b[?25h")  # kept: count, rate and failures stay readable


@pytest.mark.parametrize("case", ["off a terminal", "disabled", "nothing to count"])
def test_no_bar_draws_nothing(case: str) -> None:
    console = Console(file=io.StringIO()) if case == "off a terminal" else tty()
    enabled = case != "disabled"
    total = 0 if case == "nothing to count" else None
    with terminal.progress_bar(enabled=enabled, total=total, console=console) as bar:
        bar.update(0.5)
        bar.advance()
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]


def test_the_api_and_sweeps_draw_the_same_bar_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """`cnsim.run(progress=True)` and `cnsim.sweep(progress=True)` (and so the CLI, which calls
    them) draw through the shared bar on stderr when it is a terminal."""
    pytest.importorskip("cnsim._native")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich: stderr is a terminal
    cnsim.run(SMALL, progress=True)
    run_frames = frames(capsys.readouterr().err)
    assert re.fullmatch(r"simulating ━+ 100% 0:00:\d\d", run_frames[-1])
    cnsim.sweep(tiny_sweep(), out=tmp_path / "study", jobs=1, progress=True)
    sweep_frames = frames(capsys.readouterr().err)
    assert re.fullmatch(r"sweep tiny ━+ 2/2 .* eta 0:00:00", sweep_frames[-1])


# ---------------------------------------------------------------- in a Jupyter cell


class FakeKernel:
    """IPython as a Jupyter kernel shows it: `get_ipython()` names IPKernelApp, and `display`
    returns a handle whose updates are recorded as the HTML a cell would show."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        shell = types.SimpleNamespace(config={"IPKernelApp": {}})
        ipython = types.ModuleType("IPython")
        ipython.get_ipython = lambda: shell  # type: ignore[attr-defined]
        display = types.ModuleType("IPython.display")
        display.HTML = str  # type: ignore[attr-defined]
        display.display = self.display  # type: ignore[attr-defined]
        self.modules = {"IPython": ipython, "IPython.display": display}

    def display(self, html: str, display_id: bool) -> Any:
        assert display_id
        self.shown.append(html)
        return types.SimpleNamespace(update=self.shown.append)


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> FakeKernel:
    fake = FakeKernel()
    for name, module in fake.modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return fake


def percents(shown: list[str]) -> list[str]:
    return [re.search(r"</progress> (.*) \(", html).group(1) for html in shown]  # type: ignore[union-attr]


def test_in_a_cell_a_run_redraws_once_per_percent_and_ends_done(kernel: FakeKernel) -> None:
    assert terminal.in_jupyter()
    with terminal.progress_bar("simulating", console=tty()) as bar:
        for fraction in (0.001, 0.004, 0.5, 0.503, 0.51, 7.0):
            bar.update(fraction)
    assert percents(kernel.shown) == [
        "simulating 0%",  # displayed at the start
        "simulating 0%",  # the first update (0.1 %); 0.4 % is the same percent: not redrawn
        "simulating 50%",
        "simulating 51%",
        "simulating 100%",
        "simulating: done 100%",
    ]
    assert "<progress value='50' max='100'" in kernel.shown[2]


def test_in_a_cell_a_sweep_counts_runs_and_a_failure_is_not_done(kernel: FakeKernel) -> None:
    def two_runs_then_ctrl_c() -> None:
        with terminal.progress_bar("sweep tiny", total=4) as bar:
            bar.advance()
            bar.advance(failed=True)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        two_runs_then_ctrl_c()
    assert [re.sub(r"\(.*?\)", "", html) for html in kernel.shown[1:]] == [
        "<div><progress value='25' max='100' style='width:50%'></progress> "
        "sweep tiny 25%  1/4 runs</div>",
        "<div><progress value='50' max='100' style='width:50%'></progress> "
        "sweep tiny 50%  2/4 runs, 1 failed</div>",
    ]  # and no "done": the sweep was interrupted


def test_the_api_and_sweeps_draw_in_the_cell(kernel: FakeKernel, tmp_path: Any) -> None:
    pytest.importorskip("cnsim._native")
    cnsim.run(SMALL, progress=True)
    assert percents(kernel.shown)[-1] == "simulating: done 100%"
    kernel.shown.clear()
    cnsim.sweep(tiny_sweep(), out=tmp_path / "study", jobs=1, progress=True)
    assert percents(kernel.shown)[-2:] == ["sweep tiny 100%", "sweep tiny: done 100%"]
    assert "2/2 runs" in kernel.shown[-2]


def test_outside_a_kernel_ipython_is_not_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not terminal.in_jupyter()
    assert "IPython" not in sys.modules
