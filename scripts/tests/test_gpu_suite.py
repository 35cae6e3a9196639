"""scripts/gpu-suite.sh: shards, their verdicts and the exit status (no GPU).

The passing path runs a real doctest program of the build under test; failures, skips and
the time limit use stand-in programs that answer doctest's --count the same way."""

import os
import pathlib
import re
import stat
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITE = ROOT / "scripts" / "gpu-suite.sh"


def built_tests():
    library = os.environ.get("CC1D_LIBRARY")
    return pathlib.Path(library).parent if library else ROOT / "build"


def run_suite(build, programs, tmp_path, **env):
    settings = dict(os.environ, NO_BUILD="1", CC1D_BUILD_DIR=str(build), OUT=str(tmp_path / "logs"),
                    CC1D_TEST_CACHE_DIR=str(tmp_path / "cache"), **env)
    done = subprocess.run(["bash", str(SUITE), *programs], cwd=ROOT, env=settings,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout


def stand_in(build, name, body, cases=5):
    """A program under build/tests that says it has `cases` test cases, then runs `body`."""
    path = build / "tests" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n"
                    f'case "$*" in *--count*) echo "[doctest] unskipped test cases passing the current filters: {cases}"; exit 0;; esac\n'
                    + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_a_real_program_runs_in_shards_that_together_cover_every_case(tmp_path):
    build = built_tests()
    program = build / "tests" / "unit_test_codegen"
    if not program.exists():
        pytest.skip(f"{program} is not built")
    count = int(re.search(r"filters: *(\d+)", subprocess.run([program, "--count"], capture_output=True,
                                                             text=True).stdout).group(1))
    rc, out = run_suite(build, ["unit_test_codegen"], tmp_path, SHARD="4", JOBS="2")
    assert rc == 0, out
    shards = re.findall(r"unit_test_codegen cases (\d+)-(\d+): passed \[(\d+) ended", out)
    assert len(shards) == (count + 3) // 4
    assert sorted((int(a), int(b)) for a, b, _ in shards) == [(f, min(f + 3, count)) for f in range(1, count + 1, 4)]
    assert sum(int(ended) for _, _, ended in shards) == count


def test_a_failing_shard_fails_the_run_and_the_others_still_report(tmp_path):
    build = tmp_path / "build"
    stand_in(build, "failing", 'case "$*" in *--first=3*) exit 1;; esac\necho "0.1 s: a case"', cases=4)
    rc, out = run_suite(build, ["failing", "missing"], tmp_path, SHARD="2", JOBS="1")
    assert rc == 1
    assert "failing cases 1-2: passed [1 ended" in out
    assert "failing cases 3-4: FAILED (exit 1)" in out
    assert "missing: no such test binary" in out
    assert "2 did not pass or did not end" in out


def test_a_program_without_a_gpu_is_skipped_not_failed(tmp_path):
    build = tmp_path / "build"
    stand_in(build, "gpu_less", 'echo "SKIPPED: no usable GPU: none here"; exit 77', cases=3)
    rc, out = run_suite(build, ["gpu_less"], tmp_path, SHARD="2")
    assert rc == 0, out
    assert out.count("skipped: SKIPPED: no usable GPU: none here") == 2


def test_the_time_limit_names_the_case_a_shard_was_in_and_starts_no_more(tmp_path):
    build = tmp_path / "build"
    stand_in(build, "slow", 'echo "TEST CASE:  a long case"\nexec sleep 60', cases=2)
    rc, out = run_suite(build, ["slow"], tmp_path, SHARD="1", JOBS="1", LIMIT="7")
    assert rc == 1
    assert "slow cases 1-1: killed at the time limit in: a long case [0 ended" in out
    assert "slow cases 2-2: not started (time limit)" in out
