"""scripts/compare_runs.py on small made-up runs: means, changes, checks, missing cases."""

import json
import pathlib

import pytest

from script_loader import load_script

compare_runs = load_script("compare_runs")


def run(*cases, copy=3000.0):
    return {"device": "test device", "copy_gb_per_s": copy,
            "cases": [{"label": label, "shape_text": shape, "median_us": us, "percent_of_copy": pct,
                       "check": {"ok": ok}} for label, shape, us, pct, ok in cases]}


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_means_changes_and_order_follow_the_baseline():
    base = [run(("a", "1x2x3", 10.0, 50.0, True), ("b", "4x5x6", 20.0, 40.0, True)),
            run(("a", "1x2x3", 12.0, 46.0, True), ("b", "4x5x6", 22.0, 38.0, True))]
    # The other build's runs list the cases in another order: rows follow the baseline's.
    new = [run(("b", "4x5x6", 21.0, 39.0, True), ("a", "1x2x3", 9.0, 55.0, True)),
           run(("b", "4x5x6", 21.0, 39.0, True), ("a", "1x2x3", 9.0, 53.0, True))]
    rows, complete = compare_runs.compare([("old", base), ("new", new)])
    assert complete
    assert [r["label"] for r in rows] == ["a", "b"]
    a_old, a_new = rows[0]["builds"]
    assert a_old["mean_us"] == pytest.approx(11.0)
    assert a_old["runs_us"] == [10.0, 12.0]
    assert a_old["change"] is None
    assert a_old["percent_of_copy"] == pytest.approx(48.0)
    assert a_new["mean_us"] == pytest.approx(9.0)
    assert a_new["change"] == pytest.approx(100.0 * (9.0 / 11.0 - 1.0))
    assert rows[1]["builds"][1]["change"] == pytest.approx(0.0)
    assert all(r["ok"] for r in rows)
    assert "-18.2%" in compare_runs.format_row(rows[0])


def test_a_failed_check_in_any_run_marks_the_row():
    base = [run(("a", "s", 10.0, 50.0, True))]
    new = [run(("a", "s", 9.0, 55.0, True)), run(("a", "s", 9.0, 55.0, False))]
    rows, complete = compare_runs.compare([("old", base), ("new", new)])
    assert complete
    assert not rows[0]["ok"]
    assert "CHECK FAILED" in compare_runs.format_row(rows[0])


def test_a_case_missing_from_a_run_is_reported():
    base = [run(("a", "s", 10.0, 50.0, True), ("b", "s", 10.0, 50.0, True))]
    new = [run(("a", "s", 9.0, 55.0, True))]
    rows, complete = compare_runs.compare([("old", base), ("new", new)])
    assert not complete
    assert rows[0]["ok"] and not rows[1]["ok"]
    assert "new missing" in compare_runs.format_row(rows[1])


def test_main_exit_status(tmp_path, capsys):
    good = write(tmp_path, "good.json", run(("a", "s", 10.0, 50.0, True)))
    bad = write(tmp_path, "bad.json", run(("a", "s", 9.0, 55.0, False)))
    assert compare_runs.main(["x", f"old={good}", f"new={good},{good}"]) == 0
    assert compare_runs.main(["x", f"old={good}", f"new={bad}"]) == 1
    assert compare_runs.main(["x", "no-equals-sign"]) == 2
    assert compare_runs.main(["x", f"old={tmp_path / 'absent.json'}"]) == 2
    assert compare_runs.main(["x"]) == 2
    out = capsys.readouterr()
    assert "# old: test device, copy GB/s 3000" in out.out
    assert "expected NAME=RUN.json" in out.err
