"""A wide sweep table in a narrow terminal: the columns that fit, the rest named in the caption
(rich would squeeze every column to a character otherwise)."""

from __future__ import annotations

from cnsim import readout, terminal


def wide_table(n_columns: int) -> readout.TextTable:
    columns = ["scheme", *(f"bucket{i}_p99" for i in range(n_columns - 1))]
    rows = [[readout.Cell("hpcc"), *(readout.Cell("12.34") for _ in range(n_columns - 1))]]
    return readout.TextTable("t", columns, rows, "DIR/table.csv", frozenset({"scheme"}))


def test_a_table_that_fits_is_left_whole() -> None:
    table = wide_table(3)
    assert terminal.fit_width(table, 200) == table


def test_columns_that_do_not_fit_are_left_to_the_csv_and_named() -> None:
    # The left border 1, "scheme" 6 + 3 characters, each "bucketN_p99" 11 + 3: 80 columns hold
    # five of them (1 + 9 + 5 x 14 = 80).
    table = terminal.fit_width(wide_table(20), 80)
    assert table.columns == ["scheme", *(f"bucket{i}_p99" for i in range(5))]
    assert all(len(row) == 6 for row in table.rows)
    assert table.caption.startswith("DIR/table.csv; 14 more columns (bucket5_p99, ")
    assert table.caption.endswith("bucket18_p99) in the CSV")


def test_the_first_column_stays_however_narrow_the_terminal() -> None:
    assert terminal.fit_width(wide_table(5), 5).columns == ["scheme"]
