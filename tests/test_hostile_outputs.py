"""Faults while a run writes its directory (issue 13): a kill, a full disk, a reused or
foreign directory. The directory always holds one whole run (the earlier one or the new one),
never a mix, and errors name the file.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.parquet
import pytest

from cnsim import outputs
from cnsim.result import Result

CNSIM_RUN = [sys.executable, "-m", "cnsim.cli", "run"]


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def hidden_siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith("."))


def test_reused_directory_keeps_no_file_of_the_earlier_run(make_result, tmp_path):
    out = tmp_path / "run"
    first = make_result()  # has a report window: writes window_per_source.csv
    first.save(out, plots=False)
    assert (out / outputs.WINDOW_TABLE_FILE).is_file()
    second = make_result()
    second.summary.pop("window", None)
    second.summary["scenario"] = "second"
    second.save(out, plots=False)
    assert files(out) == {"scenario.toml", "summary.json", "timeseries.parquet"}
    assert json.loads((out / "summary.json").read_text())["scenario"] == "second"
    assert hidden_siblings(out) == []


def test_a_failure_mid_write_leaves_the_earlier_run_whole(make_result, tmp_path, monkeypatch):
    out = tmp_path / "run"
    make_result().save(out, plots=False)
    before = {name: (out / name).read_bytes() for name in files(out)}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C (or a kill) while the figures are drawn

    monkeypatch.setattr("cnsim.plots.make_plots", interrupted)
    newer = make_result()
    newer.summary["scenario"] = "newer"
    with pytest.raises(KeyboardInterrupt):
        newer.save(out, plots=True)
    assert {name: (out / name).read_bytes() for name in files(out)} == before
    assert hidden_siblings(out) == []  # the half-written temporary directory is gone


def test_a_full_disk_names_the_file_and_writes_no_summary(make_result, tmp_path, monkeypatch):
    out = tmp_path / "run"

    def disk_full(table, handle, **kwargs):
        handle.write(b"PAR1 truncated")
        raise OSError(errno.ENOSPC, "No space left on device")  # pyarrow gives no file name

    monkeypatch.setattr(pyarrow.parquet, "write_table", disk_full)
    with pytest.raises(OSError, match="No space left") as caught:
        make_result().save(out, plots=False)
    assert caught.value.filename.endswith("timeseries.parquet")
    assert not out.exists()  # no summary.json claiming completed: true beside a torn file
    assert hidden_siblings(out) == []


def test_summary_is_written_last(make_result, tmp_path, monkeypatch):
    order: list[str] = []
    real_write = outputs._write

    def spy(path, fill):
        order.append(path.name)
        real_write(path, fill)

    monkeypatch.setattr(outputs, "_write", spy)
    make_result().save(tmp_path / "run", plots=False)
    assert order[-1] == "summary.json"


def test_killed_writer_leaves_old_or_new_never_a_mix(make_result, tmp_path):
    """SIGKILL at the moment the new run's files are complete but not yet in place."""
    out = tmp_path / "run"
    make_result().save(out, plots=False)
    old_summary = (out / "summary.json").read_text()
    script = textwrap.dedent(
        f"""
        import os, signal
        from cnsim import outputs
        from cnsim.result import Result
        def killed(new, out_dir):
            os.kill(os.getpid(), signal.SIGKILL)
        outputs._replace_dir = killed
        result = Result.load({str(out)!r})
        result.summary["scenario"] = "new"
        result.save({str(out)!r}, plots=False)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    assert (out / "summary.json").read_text() == old_summary  # still the old, whole run
    assert len(hidden_siblings(out)) == 1  # the dead writer's complete temporary directory
    make_result().save(out, plots=False)  # the next write clears what the dead one left
    assert hidden_siblings(out) == []


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: (d / "notes.txt").write_text("mine"), "holds 'notes.txt'"),
        (lambda d: None, None),  # an empty directory is fine
    ],
)
def test_a_directory_with_foreign_files_is_refused(make_result, tmp_path, setup, message):
    out = tmp_path / "mine"
    out.mkdir()
    setup(out)
    if message is None:
        make_result().save(out, plots=False)
        assert (out / "summary.json").is_file()
        return
    with pytest.raises(outputs.OutputError, match=message):
        make_result().save(out, plots=False)
    assert (out / "notes.txt").read_text() == "mine"


def test_empty_and_working_directory_outputs_are_refused(make_result, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(outputs.OutputError, match="empty name"):
        make_result().save("", plots=False)
    with pytest.raises(outputs.OutputError, match="working directory"):
        make_result().save(".", plots=False)
    with pytest.raises(outputs.OutputError, match="working directory"):
        make_result().save("..", plots=False)
    assert os.listdir(tmp_path) == []


def test_a_file_in_the_way_is_refused(make_result, tmp_path):
    (tmp_path / "run").write_text("x")
    with pytest.raises(outputs.OutputError, match="is a file"):
        make_result().save(tmp_path / "run", plots=False)


def test_saved_run_loads_back_whole(make_result, tmp_path):
    out = make_result().save(tmp_path / "run", plots=False)
    loaded = Result.load(out)
    assert loaded.summary["frames"] == make_result().summary["frames"]


def test_ctrl_c_during_a_run_exits_130_and_writes_nothing(tmp_path):
    pytest.importorskip("cnsim._native")
    out = tmp_path / "run"
    proc = subprocess.Popen(
        # 60 simulated seconds: some 15 s of wall time, so the signal lands mid-run.
        [*CNSIM_RUN, "seed004-qcn", "--set", "duration_s=60", "--out", str(out), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)  # past start-up and validation
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted: nothing was written" in stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
