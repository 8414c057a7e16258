"""cnsim's figures, one module per subject, all drawn in one shared look:

- `style`: size, resolution, axis names and units, legends, the provenance stamp, file names;
- `run`: a run's figures ([[report.plots]] or a default set, bars, drops), `figure`,
  `make_plots`;
- `timeseries`: one metric vs time (lines, or a band for many entities; reference lines; a
  zoomed steady-state panel);
- `flows`: a flow workload's FCT distribution and FCT and slowdown by size;
- `sweep`: a sweep's per-point statistics and a transient study's figures (imported on use:
  it needs the sweep file's types).

The figure modules share nothing but `style`'s public names. The names below are those
`cnsim.plots` had as one module, so `from cnsim import plots; plots.figure(result, name)`
keeps working.
"""

from __future__ import annotations

from cnsim.plots.run import (
    DROPS,
    PLOT_KINDS,
    bar_values,
    default_specs,
    drawable,
    figure,
    figure_names,
    make_plots,
    plot_bar,
    plot_drops,
    plot_specs,
    window_text,
)
from cnsim.plots.style import (
    AXIS_NAMES,
    DPI,
    FIGSIZE,
    LEGEND_INSIDE_MAX,
    axis_label,
    drop_all_zero,
    file_stem,
    time_unit,
    value_unit,
)
from cnsim.plots.timeseries import (
    ENVELOPE_BINS,
    ENVELOPE_MAX_POINTS,
    MANY_ENTITIES,
    RECOVERY_INSET_FRACTION,
    STEP_METRICS,
    ZOOM_RATIO,
    envelope,
    plot_timeseries,
)

__all__ = [
    "AXIS_NAMES",
    "DPI",
    "DROPS",
    "ENVELOPE_BINS",
    "ENVELOPE_MAX_POINTS",
    "FIGSIZE",
    "LEGEND_INSIDE_MAX",
    "MANY_ENTITIES",
    "PLOT_KINDS",
    "RECOVERY_INSET_FRACTION",
    "STEP_METRICS",
    "ZOOM_RATIO",
    "axis_label",
    "bar_values",
    "default_specs",
    "drawable",
    "drop_all_zero",
    "envelope",
    "figure",
    "figure_names",
    "file_stem",
    "make_plots",
    "plot_bar",
    "plot_drops",
    "plot_specs",
    "plot_timeseries",
    "time_unit",
    "value_unit",
    "window_text",
]
