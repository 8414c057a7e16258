"""The command line as a user meets it: `--version`, `python -m cnsim`, shell completion, help
without noise, a fast start, and the missing-core error."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time

import pytest

import cnsim
from conftest import small_run


def cnsim_cmd(
    *args: str, module: str = "cnsim", extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", **(extra_env or {})}
    cmd = [sys.executable, "-m", module, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flag_names_package_and_core(flag: str) -> None:
    done = cnsim_cmd(flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cnsim {cnsim.__version__} (core {cnsim.native_version()})"


def test_python_dash_m_is_the_cnsim_command() -> None:
    done = cnsim_cmd("--help")
    assert done.returncode == 0, done.stderr
    assert "Usage: cnsim " in done.stdout
    assert "schema" in done.stdout


@pytest.mark.parametrize("command", [[], ["run"], ["sweep"], ["show"], ["schema"]])
def test_help_shows_no_type_beside_flags(command: list[str]) -> None:
    done = cnsim_cmd(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert "<bool>" not in done.stdout
    assert "--help" in done.stdout


def test_shell_completion_is_offered() -> None:
    done = cnsim_cmd("--help")
    assert "--install-completion" in done.stdout
    # Typer detects the shell from the parent process unless told not to, and then takes
    # `--show-completion` as a flag: under a parent that is no shell it answered "Shell not
    # supported". Named, the shell is the one asked for whatever runs the test.
    no_detection = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    shown = cnsim_cmd("--show-completion", "bash", extra_env=no_detection)
    assert shown.returncode == 0, shown.stderr
    assert "complete" in shown.stdout
    assert "cnsim" in shown.stdout


def heavy_modules_loaded(cli_calls: str, heavy: set[str]) -> list[str]:
    """Which of `heavy` a fresh interpreter imports for `import cnsim.cli` and then
    `cli_calls` (Python lines that may use `app` and `CliRunner`, and assert on the results)."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from cnsim.cli import app\n"
        f"{cli_calls}\n"
        f"print(sorted(set({sorted(heavy)!r}) & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return list(ast.literal_eval(done.stdout.strip()))


def test_version_does_not_import_pandas() -> None:
    """`cnsim --version` and completion start fast: no pandas or matplotlib on the way."""
    assert heavy_modules_loaded("", {"pandas", "matplotlib"}) == []
    start = time.perf_counter()
    assert cnsim_cmd("--version").returncode == 0
    assert time.perf_counter() - start < 10  # generous: the CI machine is shared


def test_scenario_errors_do_not_import_pandas() -> None:
    """`cnsim run` reports a bad preset or field before anything loads pandas or matplotlib
    (half a second of start-up): the checks come first, the heavy modules only for a run."""
    calls = (
        "bad = [['run', 'no-such-preset'], ['run', 'seed004-qcn', '--set', 'duration_s=-1']]\n"
        "for args in bad:\n"
        "    done = CliRunner().invoke(app, args)\n"
        "    assert done.exit_code == 2, (args, done.output)"
    )
    assert heavy_modules_loaded(calls, {"pandas", "matplotlib"}) == []


SMALL_RUN = small_run("window_s = [2e-4, 1e-3]")


def test_a_small_run_without_plots_does_not_import_pandas(tmp_path) -> None:
    """`cnsim run --no-plots -q` writes its files, the window table included, without pandas or
    matplotlib (issue 12: their import takes longer than a small simulation), nor rich: it draws
    no table and no bar; nor pydantic, which only sweep files need (typer 0.29 and later import
    it for every command: pyproject.toml caps typer below that)."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_RUN)
    out = tmp_path / "out"
    calls = (
        f"args = ['run', {str(scenario)!r}, '--out', {str(out)!r}, '--no-plots', '-q']\n"
        "done = CliRunner().invoke(app, args)\n"
        "assert done.exit_code == 0, done.output"
    )
    assert heavy_modules_loaded(calls, {"pandas", "matplotlib", "rich", "pydantic"}) == []
    written = {"scenario.toml", "summary.json", "timeseries.parquet", "window_per_source.csv"}
    assert {p.name for p in out.iterdir()} == written


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("3", "3")])
def test_commands_ask_openblas_for_one_thread(given: str | None, expected: str) -> None:
    """No command does linear algebra: the CLI asks numpy's OpenBLAS for one thread (starting
    one per core is a fifth of a small run), unless the user chose a number."""
    code = (
        "import os\n"
        "from typer.testing import CliRunner\n"
        "from cnsim.cli import app\n"
        "assert CliRunner().invoke(app, ['presets']).exit_code == 0\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_missing_core_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from cnsim import api

    monkeypatch.setattr(api, "_native", None)
    monkeypatch.setattr(api, "_NATIVE_IMPORT_ERROR", ImportError("no module"))
    with pytest.raises(ImportError, match=r"pip install dist/cnsim-\*\.whl") as caught:
        api.native()
    assert "maturin develop" not in str(caught.value)
