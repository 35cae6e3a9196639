"""scripts/bench_alternating.py's plan: settings, shared builds, alternating order (no GPU)."""

import pathlib

import pytest

from script_loader import load_script

bench_alternating = load_script("bench_alternating")


def test_settings_parse_with_and_without_environment():
    assert bench_alternating.parse_setting("before=.ab/head") == {"name": "before", "source": ".ab/head", "env": {}}
    assert bench_alternating.parse_setting("k2=.@CC1D_X=2@CC1D_Y=") == {
        "name": "k2", "source": ".", "env": {"CC1D_X": "2", "CC1D_Y": ""}}
    for bad in ["nosource", "=.", "a=", "a b=.", "a=.@novalue", "a=.@=3"]:
        with pytest.raises(ValueError):
            bench_alternating.parse_setting(bad)


def test_rounds_alternate_their_order():
    order = bench_alternating.round_order(["a", "b", "c"], 3)
    assert order == [(1, "a"), (1, "b"), (1, "c"), (2, "c"), (2, "b"), (2, "a"), (3, "a"), (3, "b"), (3, "c")]


def plan_of(*settings, rounds=2):
    return bench_alternating.parse_args(["x", "--config", "cfg.json", "--precompile", "pc.json", "--out", "/o",
                                         "--work", "/w", "--rounds", str(rounds), *settings]).commands


def test_settings_of_one_tree_share_its_build_and_cache():
    commands = plan_of("built=.", "two=.@KNOB=2", "old=.ab/head")
    argvs = [c for c, _ in commands]
    assert argvs[0] == ["rm", "-rf", "/w"]   # a kept machine's leftovers go first
    configures = [a for a in argvs if a[:2] == ["cmake", "-S"]]
    assert [a[2] for a in configures] == [".", ".ab/head"]
    benches = [(a, env) for a, env in commands if a[0].endswith("cc1d-bench")]
    assert len(benches) == 6
    assert [pathlib.Path(a[a.index("--json") + 1]).name for a, _ in benches] == [
        "built-1.json", "two-1.json", "old-1.json", "old-2.json", "two-2.json", "built-2.json"]
    by_name = {pathlib.Path(a[a.index("--json") + 1]).stem: (a, env) for a, env in benches}
    assert by_name["built-1"][0][0] == by_name["two-1"][0][0] == "/w/build-0/tools/cc1d-bench"
    assert by_name["old-1"][0][0] == "/w/build-1/tools/cc1d-bench"
    assert by_name["two-1"][1] == {"KNOB": "2", "CC1D_CACHE_DIR": "/w/cache-0"}
    assert by_name["built-2"][1] == {"CC1D_CACHE_DIR": "/w/cache-0"}
    assert by_name["old-2"][1] == {"CC1D_CACHE_DIR": "/w/cache-1"}
    assert all(a[a.index("--config") + 1] == "cfg.json" for a, _ in benches)
    compare = argvs[-1]
    assert compare[1].endswith("compare_runs.py")
    assert compare[2:] == ["built=/o/built-1.json,/o/built-2.json", "two=/o/two-1.json,/o/two-2.json",
                           "old=/o/old-1.json,/o/old-2.json"]


def test_names_must_differ():
    with pytest.raises(SystemExit) as e:
        plan_of("a=.", "a=.@K=1")
    assert e.value.code == 2


def test_dry_run_prints_and_runs_nothing(capsys):
    argv = ["x", "--config", "c.json", "--precompile", "p.json", "--out", "/nonexistent/o",
            "--work", "/nonexistent/w", "--dry-run", "a=.", "b=.@K=1"]
    assert bench_alternating.main(argv) == 0
    out = capsys.readouterr().out
    assert "+ rm -rf /nonexistent/w" in out
    assert "+ K=1 CC1D_CACHE_DIR=/nonexistent/w/cache-0 /nonexistent/w/build-0/tools/cc1d-bench" in out
    assert not pathlib.Path("/nonexistent/w").exists()


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as e:
        bench_alternating.main(["x", "--config", "c", "--precompile", "p", "--out", "o", "bad"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        bench_alternating.main(["x", "--config", "c", "--precompile", "p", "--out", "o", "--rounds", "0", "a=."])
    assert e.value.code == 2
