"""Host overhead of the Python call path on a tiny shape (GPU needed).

Each level is one way into the same kernel launch, so the differences show where the
time goes:

  c_abi           ctypes call of cc1d_forward / cc1d_update with a prebuilt argument
                  struct: the C++ Runtime's own cost plus one FFI call (the floor of any
                  binding)
  launch          cc1d._launch: the struct filled from torch tensors, the current stream
  op              torch.ops.cc1d.*: the dispatcher and the custom op (output allocation)
  public.op       cc1d.causal_conv1d_fn / causal_conv1d_update with the eager fast path
                  switched off: argument checks, then the custom op
  public.grad     the public function with grad mode on and a weight that requires grad:
                  the custom op, with autograd recording the call
  public.fast     the public function under torch.no_grad(): the eager fast path (its
                  one-pass argument checks, no dispatcher), as in inference and decoding

Times are wall-clock microseconds per call over many back-to-back calls on one stream
(the GPU work of a tiny shape is a few microseconds, so host overhead dominates); the
last column is each level's time over c_abi, the cost the Python layers add.
"""

import argparse
import contextlib
import ctypes
import json
import statistics
import sys
import time

DTYPE_NAMES = ("bf16", "fp16", "fp32")


def time_per_call(fn, iters, repeats, torch):
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


def time_level(level, iters, repeats, torch):
    """A level is (context, fn): the context (grad mode, fast path off) is entered once
    around all the timed calls, so its own cost is not counted."""
    context, fn = level
    with context():
        return time_per_call(fn, iters, repeats, torch)


def prebuilt_call(struct_type, offsets_and_tensors, name):
    """A ctypes call of the library function `name` with an argument struct built once."""
    import torch
    from cc1d import _abi, _launch, _library

    args = _abi.new(struct_type)
    for offset, tensor in offsets_and_tensors:
        _launch.describe(args, offset, tensor)
    args.activation = _abi.Activation.SILU
    function, handle = _library.address_function(name), _library.runtime().value
    address, stream = ctypes.addressof(args), torch.cuda.current_stream().cuda_stream

    def call():
        function(handle, address, stream)

    call.keep_alive = args      # the struct must outlive the closure's use of its address
    return call


@contextlib.contextmanager
def fast_path_off():
    from cc1d import _fast_path

    saved = _fast_path.AVAILABLE
    _fast_path.AVAILABLE = False
    try:
        yield
    finally:
        _fast_path.AVAILABLE = saved


def levels(torch, cc1d, tensors):
    """{op: {level: (context, callable)}}, each level one way into the same launch."""
    from cc1d import _abi, _launch

    x, weight, bias, out, token, state, token_out, grad_weight = tensors
    forward_tensors = zip(_launch._FORWARD_TENSORS, (x, weight, bias, out))
    update_tensors = zip(_launch._UPDATE_TENSORS, (token, state, weight, bias, token_out))
    fn, update = cc1d.causal_conv1d_fn, cc1d.causal_conv1d_update
    plain = contextlib.nullcontext
    return {
        "forward": {
            "c_abi": (plain, prebuilt_call(_abi.ForwardArgs, forward_tensors, "cc1d_forward")),
            "launch": (plain, lambda: _launch.forward(x, weight, bias, out, True)),
            "op": (plain, lambda: torch.ops.cc1d.causal_conv1d_fwd(x, weight, bias, None, None, False, True)),
            "public.op": (fast_path_off, lambda: fn(x, weight, bias, activation="silu")),
            "public.grad": (torch.enable_grad, lambda: fn(x, grad_weight, bias, activation="silu")),
            "public.fast": (torch.no_grad, lambda: fn(x, weight, bias, activation="silu")),
        },
        "update": {
            "c_abi": (plain, prebuilt_call(_abi.UpdateArgs, update_tensors, "cc1d_update")),
            "launch": (plain, lambda: _launch.update(token, state, weight, bias, token_out, True)),
            "op": (plain, lambda: torch.ops.cc1d.causal_conv1d_update(token, state, weight, bias, True, None, None)),
            "public.op": (fast_path_off, lambda: update(token, state, weight, bias, "silu")),
            "public.grad": (torch.enable_grad, lambda: update(token, state, grad_weight, bias, "silu")),
            "public.fast": (torch.no_grad, lambda: update(token, state, weight, bias, "silu")),
        },
    }


def unavailable_reason():
    """Why this machine cannot run the benchmark, or None."""
    try:
        import torch
    except ModuleNotFoundError:
        return "bench_overhead.py needs torch installed"
    import cc1d

    if not torch.cuda.is_available():
        return "bench_overhead.py needs a GPU (torch.cuda.is_available() is False)"
    try:
        cc1d.library_path()
    except cc1d.LibraryNotFoundError as error:
        return f"bench_overhead.py needs libcc1d.so: {error}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=DTYPE_NAMES, default="bf16")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--seqlen", type=int, default=128)
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the results to this file")
    options = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(reason, file=sys.stderr)
        raise SystemExit(2)

    import torch

    import cc1d

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[options.dtype]
    b, d, l, w = options.batch, options.dim, options.seqlen, options.width
    x = torch.randn(b, d, l, device="cuda", dtype=dtype)
    weight = torch.randn(d, w, device="cuda", dtype=dtype)
    bias = torch.randn(d, device="cuda", dtype=dtype)
    token = torch.randn(b, d, device="cuda", dtype=dtype)
    state = torch.randn(b, d, w - 1, device="cuda", dtype=dtype)
    tensors = (x, weight, bias, torch.empty_like(x), token, state, torch.empty_like(token),
               weight.clone().requires_grad_(True))

    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cc1d": cc1d.version(),
               "shape": {"batch": b, "dim": d, "seqlen": l, "width": w, "dtype": options.dtype}, "us_per_call": {}}
    print(f"{results['device']} · torch {results['torch']} · cc1d {results['cc1d']} · "
          f"x ({b}, {d}, {l}) {options.dtype}, width {w}, silu; host µs per call")
    print(f"{'op':<9}{'level':<13}{'µs/call':>9}{'over c_abi':>12}")
    for op, op_levels in levels(torch, cc1d, tensors).items():
        floor = None
        for level, timed in op_levels.items():
            us = time_level(timed, options.iters, options.repeats, torch)
            results["us_per_call"][f"{op}.{level}"] = us
            floor = us if floor is None else floor
            added = "" if level == "c_abi" else f"{us - floor:+.1f}"
            print(f"{op:<9}{level:<13}{us:>9.1f}{added:>12}")
    if options.json:
        with open(options.json, "w") as file:
            json.dump(results, file, indent=2)


if __name__ == "__main__":
    main()
