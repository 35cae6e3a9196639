#!/usr/bin/env python3
"""Time several builds or settings of cc1d against each other on one GPU, alternating.

Each SETTING is NAME=SOURCE_TREE, optionally with environment variables for its runs:
NAME=SOURCE_TREE@VAR=VALUE@VAR2=VALUE2. Settings that share a source tree share its
build. Every source tree is configured and built (cc1d-bench, cc1d-precompile) in its own
folder under --work, the variants of --precompile compiled into its own cache, then
every setting runs --config once a round, the order reversed every other round (drift
over minutes then weighs on every setting alike), and the runs are compared with
compare_runs.py (the first setting the baseline). A folder is cleared before it is used,
so a machine kept from an earlier call leaves nothing behind.

    scripts/bench_alternating.py --config docs/bench/entryN/ab-config.json \\
        --precompile docs/bench/entryN/precompile.json --out "$OUT" \\
        before=.ab/head after=.

    scripts/bench_alternating.py --config sweep.json --precompile pc.json --out "$OUT" \\
        built=. two=.@CC1D_SOME_KNOB=2 four=.@CC1D_SOME_KNOB=4

--dry-run prints the commands instead of running them. Needs a GPU host with what
scripts/configure.sh needs (a .deps/ folder is passed as CMAKE_PREFIX_PATH when present).
"""

import argparse
import os
import pathlib
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def parse_setting(text):
    """{"name", "source", "env"} from NAME=SOURCE[@VAR=VALUE...]."""
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise ValueError(f"a setting is NAME=SOURCE_TREE[@VAR=VALUE...], got {text!r}")
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a setting's name is letters, digits, '-' and '_', got {name!r}")
    source, *assignments = rest.split("@")
    env = {}
    for assignment in assignments:
        var, sep, value = assignment.partition("=")
        if not sep or not var:
            raise ValueError(f"expected VAR=VALUE after '@' in {text!r}, got {assignment!r}")
        env[var] = value
    return {"name": name, "source": source, "env": env}


def round_order(settings, rounds):
    """[(round, setting), ...]: every setting once a round, the order reversed every other round."""
    order = []
    for r in range(1, rounds + 1):
        names = settings if r % 2 == 1 else list(reversed(settings))
        order.extend((r, s) for s in names)
    return order


def plan(args):
    """The commands to run, as [(argv, env_overrides), ...]."""
    settings = [parse_setting(s) for s in args.settings]
    names = [s["name"] for s in settings]
    if len(set(names)) != len(names):
        raise ValueError(f"setting names must differ: {names}")
    work = pathlib.Path(args.work)
    out = pathlib.Path(args.out)
    sources = list(dict.fromkeys(s["source"] for s in settings))
    build_of = {src: work / f"build-{i}" for i, src in enumerate(sources)}
    cache_of = {src: work / f"cache-{i}" for i, src in enumerate(sources)}
    deps = ROOT / ".deps" / "usr"
    commands = [(["rm", "-rf", str(work)], {}), (["mkdir", "-p", str(work), str(out)], {})]
    for src in sources:
        configure = ["cmake", "-S", src, "-B", str(build_of[src]), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
        if deps.is_dir():
            configure.append(f"-DCMAKE_PREFIX_PATH={deps}")
        commands.append((configure, {}))
        commands.append((["cmake", "--build", str(build_of[src]), "--target", "cc1d-bench", "cc1d-precompile"], {}))
        commands.append(([str(build_of[src] / "tools" / "cc1d-precompile"), "--config", args.precompile,
                          "--cache-dir", str(cache_of[src])], {}))
    runs = []
    for r, s in round_order(settings, args.rounds):
        result = out / f"{s['name']}-{r}.json"
        env = dict(s["env"], CC1D_CACHE_DIR=str(cache_of[s["source"]]))
        commands.append(([str(build_of[s["source"]] / "tools" / "cc1d-bench"), "--config", args.config,
                          "--json", str(result)], env))
        runs.append((s["name"], result))
    compare = [sys.executable, str(ROOT / "scripts" / "compare_runs.py")]
    for name in names:
        compare.append(f"{name}=" + ",".join(str(p) for n, p in runs if n == name))
    commands.append((compare, {}))
    return commands


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="cc1d-bench config every setting runs")
    parser.add_argument("--precompile", required=True, help="cc1d-precompile config of the variants the runs use")
    parser.add_argument("--out", required=True, help="folder for each run's JSON")
    parser.add_argument("--work", default="/tmp/cc1d-alternating", help="folder for the builds and caches (cleared)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting (default 2)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument("settings", nargs="+", help="NAME=SOURCE_TREE[@VAR=VALUE...], the first the baseline")
    args = parser.parse_args(argv[1:])
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    try:
        args.commands = plan(args)
    except ValueError as e:
        parser.error(str(e))
    return args


def main(argv):
    args = parse_args(argv)
    for command, env in args.commands:
        shown = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        print(f"+ {shown + ' ' if shown else ''}{shlex.join(command)}", flush=True)
        if args.dry_run:
            continue
        result = subprocess.run(command, env={**os.environ, **env})
        if result.returncode != 0:
            return result.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
