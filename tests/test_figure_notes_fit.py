"""The notes under a figure (what a metric means, the provenance stamp) are wrapped to fit
inside it: a line wider than the figure is cut at the PNG's edges."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import cnsim
from cnsim.plots.style import DPI, NOTE_SIZE, explain, new_figure, wrap

RUNS = {
    "seed000-pause": {"duration_s": 0.01, "report.window_s": [0.0, 0.01]},
    "seed004-qcn": {},  # in full (3 s): its recovery window is at 6 s
}


def outside(fig: Figure, dpi: float) -> list[str]:
    """The figure's texts that reach past its left or right edge when drawn at `dpi`."""
    fig.set_dpi(dpi)
    renderer = FigureCanvasAgg(fig).get_renderer()
    width = fig.bbox.width
    return [
        t.get_text()
        for t in fig.texts
        if (box := t.get_window_extent(renderer)).x0 < 0 or box.x1 > width
    ]


@pytest.mark.parametrize("preset", list(RUNS))
def test_every_note_of_a_run_fits_inside_its_figure(preset: str) -> None:
    result = cnsim.run(preset, set=RUNS[preset])
    noted = 0
    for name in result.figure_names:
        fig = result.figure(name)
        noted += any("throughput:" in t.get_text() for t in fig.texts)
        for dpi in (72, 100, DPI, 200):
            assert outside(fig, dpi) == [], (name, dpi)
    assert noted, "the throughput figures carry their note"


def test_a_long_caveat_and_note_wrap_on_a_narrow_figure() -> None:
    fig, _ = new_figure()
    fig.set_size_inches(4.0, 3.0)
    explain(fig, "host_tx_bps", 5e-3, caveat="under-sampled: " + "the probes are sparse " * 8)
    assert len(fig.texts) >= 4, "both wrapped onto several lines"
    for dpi in (72, 100, DPI):
        assert outside(fig, dpi) == []


def test_wrap_breaks_between_words_only() -> None:
    text = "one two three four five six seven eight nine ten"
    lines = wrap(text, 40.0, NOTE_SIZE)
    assert len(lines) > 1
    assert " ".join(lines) == text
    assert wrap("unbreakable" * 10, 10.0, NOTE_SIZE) == ["unbreakable" * 10]
