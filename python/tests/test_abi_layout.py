"""The ctypes structs against the C header: pinned sizes, and every field's offset and
size as a C compiler lays out include/cc1d/cc1d.h. Needs no torch, library or GPU."""

import ctypes
import os
import shutil
import subprocess

import pytest

from cc1d import _abi

INCLUDE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "include")

# The same numbers tests/unit/test_c_api.cpp pins on the C++ side.
PINNED_SIZES = {
    _abi.Tensor: 64,
    _abi.ForwardArgs: 464,
    _abi.BackwardArgs: 744,
    _abi.UpdateArgs: 464,
    _abi.VarlenForwardArgs: 528,
    _abi.RuntimeOptions: 32,
    _abi.Stats: 64,
}


def test_pinned_sizes():
    for struct, size in PINNED_SIZES.items():
        assert ctypes.sizeof(struct) == size, _abi.C_NAMES[struct]


def test_new_sets_struct_size_and_defaults():
    args = _abi.new(_abi.BackwardArgs)
    assert args.struct_size == ctypes.sizeof(_abi.BackwardArgs)
    assert args.deterministic == 1 and args.accumulate == 0
    assert _abi.new(_abi.UpdateArgs).pad_slot_id == -1
    assert _abi.new(_abi.RuntimeOptions).disk_cache == 1
    tensor = _abi.new(_abi.ForwardArgs).x
    assert tensor.data is None and tensor.rank == 0   # absent


def _c_layout_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "cc1d/cc1d.h"', "int main(void) {"]
    for struct in _abi.ALL_STRUCTS:
        name = _abi.C_NAMES[struct]
        lines.append(f'    printf("{name} - 0 %zu\\n", sizeof({name}));')
        for field, _ in struct._fields_:
            lines.append(f'    printf("{name} {field} %zu %zu\\n", offsetof({name}, {field}), '
                         f"sizeof((({name}*)0)->{field}));")
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def test_fields_match_the_c_header(tmp_path):
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler:
        pytest.skip("no C compiler ($CC, cc, gcc or clang) to lay out the header")
    if not os.path.isfile(os.path.join(INCLUDE_DIR, "cc1d", "cc1d.h")):
        pytest.skip(f"the C header is not at {INCLUDE_DIR} (tests run outside the repository)")
    source = tmp_path / "layout.c"
    source.write_text(_c_layout_program())
    binary = tmp_path / "layout"
    subprocess.run([compiler, "-std=c11", "-Wall", "-Werror", f"-I{INCLUDE_DIR}", str(source), "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    report = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout

    by_name = {_abi.C_NAMES[s]: s for s in _abi.ALL_STRUCTS}
    checked = 0
    for line in report.splitlines():
        name, field, offset, size = line.split()
        offset, size = int(offset), int(size)
        struct = by_name[name]
        if field == "-":
            assert ctypes.sizeof(struct) == size, f"sizeof({name})"
        else:
            descriptor = getattr(struct, field)
            assert (descriptor.offset, descriptor.size) == (offset, size), f"{name}.{field}"
        checked += 1
    assert checked == sum(len(s._fields_) + 1 for s in _abi.ALL_STRUCTS)


def test_enums_match_the_c_header(tmp_path):
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler or not os.path.isfile(os.path.join(INCLUDE_DIR, "cc1d", "cc1d.h")):
        pytest.skip("no C compiler or no header in this checkout")
    names = {**{f"CC1D_STATUS_{s.name}": s.value for s in _abi.Status},
             **{f"CC1D_DTYPE_{d.name}": d.value for d in _abi.DType},
             **{f"CC1D_ACTIVATION_{a.name}": a.value for a in _abi.Activation},
             "CC1D_ABI_VERSION": _abi.ABI_VERSION, "CC1D_MAX_RANK": _abi.MAX_RANK}
    checks = "\n".join(f'_Static_assert({name} == {value}, "{name}");' for name, value in names.items())
    source = tmp_path / "enums.c"
    source.write_text(f'#include "cc1d/cc1d.h"\n{checks}\n')
    result = subprocess.run([compiler, "-std=c11", f"-I{INCLUDE_DIR}", "-c", str(source), "-o", str(tmp_path / "e.o")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
