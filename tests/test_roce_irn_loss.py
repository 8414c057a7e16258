"""The roce-irn-loss sweep (docs/transport.md): IRN's selective repeat against RoCE's go-back-N
under link loss, PFC on and off. Runs the whole preset (16 short runs, some 10 s on 2 cores)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import cnsim


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    out: Path = tmp_path_factory.mktemp("roce-irn-loss") / "study"
    cnsim.sweep("roce-irn-loss", out=out, jobs=2, progress=False)
    return pd.read_csv(out / "table.csv")


def test_the_table_has_the_issue_columns_and_every_point(table: pd.DataFrame) -> None:
    for column in (
        "transport",
        "pfc",
        "loss_rate",
        "fct_mean_s",
        "fct_p99_s",
        "goodput_bps",
        "retransmitted_bytes",
    ):
        assert column in table.columns, column
    assert len(table) == 16
    assert set(table["transport"]) == {"roce", "irn"}
    assert set(table["pfc"]) == {"on", "off"}
    assert sorted(set(table["loss_rate"])) == [0.0, 1e-4, 1e-3, 1e-2]


def test_without_pfc_irn_beats_go_back_n_more_as_loss_grows(table: pd.DataFrame) -> None:
    off = table[table["pfc"] == "off"].set_index(["transport", "loss_rate"])
    ratios = []
    for loss in (0.0, 1e-4, 1e-3, 1e-2):
        irn, roce = off.loc[("irn", loss)], off.loc[("roce", loss)]
        assert irn["fct_mean_s"] < roce["fct_mean_s"], loss
        assert irn["fct_p99_s"] < roce["fct_p99_s"], loss
        assert irn["retransmitted_bytes"] < roce["retransmitted_bytes"], loss
        ratios.append(roce["fct_mean_s"] / irn["fct_mean_s"])
    assert ratios[-1] > ratios[0]


def test_every_irn_flow_completes_and_irn_without_pfc_matches_roce_with_it(
    table: pd.DataFrame,
) -> None:
    irn = table[table["transport"] == "irn"]
    assert (irn["incomplete"] == 0).all()
    indexed = table.set_index(["transport", "pfc", "loss_rate"])
    for loss in (0.0, 1e-4, 1e-3, 1e-2):
        assert (
            indexed.loc[("irn", "off", loss), "fct_mean_s"]
            < indexed.loc[("roce", "on", loss), "fct_mean_s"]
        ), loss
