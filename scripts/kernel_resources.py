#!/usr/bin/env python3
"""Registers, spills and shared memory of the CUDA kernels in a cc1d disk cache.

Reads every entry (<key>.bin, with its <key>.json sidecar for the variant's name),
writes its CUBIN payload to a temporary file and asks `cuobjdump -res-usage` about it.
With --sass DIR it also writes each kernel's disassembly there. Needs cuobjdump from a
CUDA toolkit (or CUOBJDUMP=/path/to/cuobjdump; where the toolkit has none, PyPI's
nvidia-cuda-cuobjdump wheel carries one under nvidia/cu13/bin); no GPU.

    cc1d-precompile --config my.json --target sm_90 --cache-dir /tmp/c
    scripts/kernel_resources.py /tmp/c [--sass /tmp/sass]
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ENTRY_HEADER_BYTES = 48   # magic 8, format 4, reserved 4, key 16, size 8, checksum 8 (docs/cache.md)


def cuobjdump():
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        sys.exit("kernel_resources.py: no cuobjdump on PATH; set CUOBJDUMP to one")
    return tool


def cubin_payload(entry):
    data = entry.read_bytes()
    return data[ENTRY_HEADER_BYTES:] if data[:8] == b"CC1DCODE" else None


def resource_lines(tool, cubin):
    text = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True).stdout
    # "Function NAME:\n REG:40 STACK:0 SHARED:0 LOCAL:0 ..." -> {NAME: "REG:40 ..."}
    found = {}
    for name, usage in re.findall(r"Function ([^:\s]+):\s*\n\s*(.+)", text):
        found[name] = usage.strip()
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache_dir")
    parser.add_argument("--sass", help="folder for each kernel's disassembly")
    args = parser.parse_args()
    tool = cuobjdump()
    entries = sorted(pathlib.Path(args.cache_dir).rglob("*.bin"))
    if not entries:
        sys.exit(f"kernel_resources.py: no cache entries under {args.cache_dir}")
    with tempfile.TemporaryDirectory() as scratch:
        for entry in entries:
            sidecar = entry.with_suffix(".json")
            variant = json.loads(sidecar.read_text()).get("variant", entry.stem) if sidecar.exists() else entry.stem
            payload = cubin_payload(entry)
            if payload is None or not payload.startswith(b"\x7fELF"):
                print(f"{variant}: not a CUBIN entry, skipped")
                continue
            cubin = pathlib.Path(scratch) / (entry.stem + ".cubin")
            cubin.write_bytes(payload)
            for name, usage in resource_lines(tool, cubin).items():
                print(f"{variant}\n    {name}: {usage}")
            if args.sass:
                os.makedirs(args.sass, exist_ok=True)
                # (cuobjdump -sass runs nvdisasm, from its PATH or NVDISASM_PATH: without it
                # it prints nothing and says so only on stderr.)
                dump = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True)
                if dump.returncode != 0 or not dump.stdout.strip():
                    sys.exit(f"kernel_resources.py: cuobjdump -sass failed on {entry.name}: {dump.stderr.strip()}")
                (pathlib.Path(args.sass) / (entry.stem + ".sass")).write_text(f"// {variant}\n" + dump.stdout)


if __name__ == "__main__":
    main()
