"""Host overhead of the Python call path on a tiny shape (GPU needed).

Each level adds one layer on top of the one before, so the differences show where the
time goes:

  c_abi      ctypes call of cc1d_forward / cc1d_update with a prebuilt argument struct:
             the C++ Runtime's own cost plus one FFI call (the floor of any binding)
  launch     cc1d._launch: building the struct from torch tensors, the current stream
  op         torch.ops.cc1d.*: the dispatcher and the custom op (output allocation)
  public     cc1d.causal_conv1d_fn / causal_conv1d_update: argument checks and all

Times are wall-clock microseconds per call over many back-to-back calls on one stream
(the GPU work of a tiny shape is a few microseconds, so host overhead dominates).
"""

import argparse
import ctypes
import json
import statistics
import time

import torch

import cc1d
from cc1d import _abi, _launch, _library

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def time_per_call(fn, iters, repeats):
    """Median over `repeats` of the mean wall time of `iters` calls, in µs."""
    for _ in range(max(10, iters // 10)):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / iters * 1e6)
    return statistics.median(samples)


def prebuilt_forward(x, weight, bias, out):
    args = _abi.new(_abi.ForwardArgs)
    _launch._fill(args.x, x)
    _launch._fill(args.weight, weight)
    _launch._fill(args.bias, bias)
    _launch._fill(args.out, out)
    args.activation = _abi.Activation.SILU
    function, handle = _library.library().cc1d_forward, _library.runtime()
    stream, pointer = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), ctypes.byref(args)

    def call():
        function(handle, pointer, stream)

    return call


def prebuilt_update(x, state, weight, bias, out):
    args = _abi.new(_abi.UpdateArgs)
    for name, tensor in (("x", x), ("conv_state", state), ("weight", weight), ("bias", bias), ("out", out)):
        _launch._fill(getattr(args, name), tensor)
    args.activation = _abi.Activation.SILU
    function, handle = _library.library().cc1d_update, _library.runtime()
    stream, pointer = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), ctypes.byref(args)

    def call():
        function(handle, pointer, stream)

    return call


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--seqlen", type=int, default=128)
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the results to this file")
    options = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_overhead.py needs a GPU (torch.cuda.is_available() is False)")

    dtype = DTYPES[options.dtype]
    b, d, l, w = options.batch, options.dim, options.seqlen, options.width
    x = torch.randn(b, d, l, device="cuda", dtype=dtype)
    weight = torch.randn(d, w, device="cuda", dtype=dtype)
    bias = torch.randn(d, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    token = torch.randn(b, d, device="cuda", dtype=dtype)
    state = torch.randn(b, d, w - 1, device="cuda", dtype=dtype)
    token_out = torch.empty_like(token)

    forward_levels = {
        "c_abi": prebuilt_forward(x, weight, bias, out),
        "launch": lambda: _launch.forward(x, weight, bias, out, True),
        "op": lambda: torch.ops.cc1d.causal_conv1d_fwd(x, weight, bias, None, None, False, True),
        "public": lambda: cc1d.causal_conv1d_fn(x, weight, bias, activation="silu"),
    }
    update_levels = {
        "c_abi": prebuilt_update(token, state, weight, bias, token_out),
        "launch": lambda: _launch.update(token, state, weight, bias, token_out, True),
        "op": lambda: torch.ops.cc1d.causal_conv1d_update(token, state, weight, bias, True, None, None),
        "public": lambda: cc1d.causal_conv1d_update(token, state, weight, bias, "silu"),
    }
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cc1d": cc1d.version(),
               "shape": {"batch": b, "dim": d, "seqlen": l, "width": w, "dtype": options.dtype}, "us_per_call": {}}
    print(f"{results['device']} · torch {results['torch']} · cc1d {results['cc1d']} · "
          f"x ({b}, {d}, {l}) {options.dtype}, width {w}, silu")
    print(f"{'op':<9}{'level':<9}{'µs/call':>10}{'added':>10}")
    for op, levels in (("forward", forward_levels), ("update", update_levels)):
        previous = None
        for level, fn in levels.items():
            us = time_per_call(fn, options.iters, options.repeats)
            results["us_per_call"][f"{op}.{level}"] = us
            added = "" if previous is None else f"{us - previous:+.1f}"
            print(f"{op:<9}{level:<9}{us:>10.1f}{added:>10}")
            previous = us
    if options.json:
        with open(options.json, "w") as file:
            json.dump(results, file, indent=2)


if __name__ == "__main__":
    main()
