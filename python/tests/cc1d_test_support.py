"""What the tests share: skip conditions with visible reasons, fresh random seeds, and
the tolerances of SEMANTICS.md."""

import os

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")

import cc1d  # noqa: E402  (after the torch check, so a missing torch reads as a skip)


def library_missing_reason():
    try:
        cc1d.library_path()
    except cc1d.LibraryNotFoundError as error:
        return f"libcc1d.so not available: build the `cc1d` target or set CC1D_LIBRARY ({error})"
    return None


def gpu_missing_reason():
    reason = library_missing_reason()
    if reason:
        return reason
    if not torch.cuda.is_available():
        return "no GPU visible to torch (torch.cuda.is_available() is False)"
    return None


requires_library = pytest.mark.skipif(library_missing_reason() is not None, reason=str(library_missing_reason()))
requires_gpu = pytest.mark.skipif(gpu_missing_reason() is not None, reason=str(gpu_missing_reason()))

DTYPES = [torch.float32, torch.float16, torch.bfloat16]

# (rtol, atol) per dtype of x, against an fp64 reference.
TOLERANCE = {
    torch.float32: (3e-4, 1e-3),
    torch.float16: (3e-3, 5e-3),
    torch.bfloat16: (1e-2, 5e-2),
}


@pytest.fixture
def seed():
    """A fresh seed per test (never the same data twice), named in failures."""
    value = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(value)
    return value


def spy_on_fast_path(monkeypatch):
    """The names ("forward", "update") of the public calls that take the eager fast path
    from now on, in order (a list that fills as they run)."""
    from cc1d import _fast_path

    taken = []
    for name in ("forward", "update"):
        def spy(*args, _name=name, _run=getattr(_fast_path, name)):
            taken.append(_name)
            return _run(*args)

        monkeypatch.setattr(_fast_path, name, spy)
    return taken


@pytest.fixture(params=["fast_path", "custom_op"])
def call_path(request, monkeypatch):
    """Runs a test twice: once with the public functions on their eager fast path, once
    with that path switched off so that every call goes through the torch.ops.cc1d
    custom ops. After the test, checks that the calls took the path named."""
    from cc1d import _fast_path

    taken = spy_on_fast_path(monkeypatch)
    if request.param == "custom_op":
        monkeypatch.setattr(_fast_path, "AVAILABLE", False)
    yield request.param
    if request.param == "custom_op":
        assert not taken, f"calls took the fast path with it switched off: {taken}"
    else:
        assert taken, "no call took the eager fast path"


def assert_close(actual, expected, dtype, seed, what):
    rtol, atol = TOLERANCE[dtype]
    torch.testing.assert_close(actual.double(), expected.double(), rtol=rtol, atol=atol,
                               msg=lambda m: f"{what} (seed {seed}): {m}")


def assert_weight_grad_close(actual, expected, batch, length, seed, what):
    """dweight/dbias are fp32 reductions over batch·length terms (SEMANTICS.md). Returned
    in a 16-bit parameter dtype they also carry that dtype's rounding, so the relative
    tolerance is at least the dtype's own."""
    atol = 1e-3 * max(1.0, (batch * length) ** 0.5)
    rtol = max(1e-3, TOLERANCE.get(actual.dtype, (1e-3, 0))[0])
    torch.testing.assert_close(actual.double(), expected.double(), rtol=rtol, atol=atol,
                               msg=lambda m: f"{what} (seed {seed}): {m}")


def assert_equal(actual, expected, seed, what):
    """Copies (states) must be bit-identical."""
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, msg=lambda m: f"{what} (seed {seed}): {m}")


def random(shape, dtype, device="cuda", channel_last=False):
    """Uniform in [-1, 1), optionally as a channel-last view of a (B, L, D) tensor."""
    if channel_last:
        batch, dim, length = shape
        return (torch.rand(batch, length, dim, device=device) * 2 - 1).to(dtype).transpose(1, 2)
    return (torch.rand(*shape, device=device) * 2 - 1).to(dtype)


def random_seq_idx(batch, length, device="cuda", with_padding=True):
    """int32 (B, L) ids of packed sequences: runs of one id each, ids in no particular
    order (boundaries are found by equality), and padding (-1) at the end of a row."""
    rows = []
    for _ in range(batch):
        cuts = sorted(torch.randint(0, length + 1, (3,)).tolist())
        labels = torch.randperm(1000)[:4].to(torch.int32)
        ids = torch.full((length,), int(labels[0]), dtype=torch.int32)
        for run, cut in enumerate(cuts):
            ids[cut:] = labels[run + 1]
        if with_padding:
            ids[cuts[-1]:] = -1
        rows.append(ids)
    return torch.stack(rows).to(device)
