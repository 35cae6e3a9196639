"""Memory layouts of (B, D, L) tensors, as the library reads them from the strides.

channel-first: stride(2) == 1 (each channel's row is contiguous);
channel-last:  stride(1) == 1 (stored as (B, L, D)).
Inputs in either layout pass through untouched; anything else is copied once into
the channel-first layout. Outputs are allocated in the layout of x, by one rule that
the real and the fake (tracing) implementations share, so both give the same strides.
"""

import torch

_CONTIGUOUS = torch.contiguous_format     # a module attribute read less per call


# Host time: x.stride() and x.shape cost about half of x.stride(i) and x.size(i), which
# go through torch's overload parsing; and torch.empty parses sizes given one by one
# faster than one tuple of them. Both matter on the eager fast path.


def is_channel_last(x):
    """True when x is used as channel-last. A channel-last view with D == 1 is copied
    to channel-first instead: with one channel its strides cannot be told apart."""
    strides = x.stride()
    return strides[2] != 1 and strides[1] == 1 and x.shape[1] > 1


def empty_conv(shape, channel_last, like):
    """An uninitialized (B, D, L) tensor in the given layout, on like's device and dtype."""
    batch, dim, length = shape
    if channel_last:
        return torch.empty(batch, length, dim, dtype=like.dtype, device=like.device).transpose(1, 2)
    return torch.empty(batch, dim, length, dtype=like.dtype, device=like.device)


def empty_like_conv(x, channel_last):
    """An uninitialized tensor with x's shape, dtype and device in the given layout: the
    tensor empty_conv(x.shape, channel_last, x) gives. Channel-first goes through
    torch.empty_like with the contiguous format, which has no shape, dtype or device to
    parse and so costs less host time on every call."""
    if channel_last:
        return empty_conv(x.shape, True, x)
    return torch.empty_like(x, memory_format=_CONTIGUOUS)


def as_conv_input(x):
    """x itself when its layout is one the library reads, else a channel-first copy."""
    if x.stride()[2] == 1 or is_channel_last(x):
        return x
    copy = empty_conv(x.shape, False, x)
    copy.copy_(x)
    return copy


def in_layout_of(t, x):
    """t (shaped like x) in x's layout: the backward needs dout and dx to match x."""
    channel_last = is_channel_last(x)
    if channel_last == is_channel_last(t) and (channel_last or t.stride(2) == 1):
        return t
    copy = empty_conv(t.shape, channel_last, t)
    copy.copy_(t)
    return copy


def has_unit_stride(t):
    """The library's rule for states and decoding inputs: some dimension has stride 1
    (a size-1 dimension counts, whatever its stride)."""
    return t.numel() == 0 or 1 in t.stride() or 1 in t.shape


def unit_stride_in(shape, strides):
    """has_unit_stride from a tensor's shape and strides already read (0 in the shape
    is numel() == 0)."""
    return 0 in shape or 1 in strides or 1 in shape


def with_unit_stride(t):
    if t is None or has_unit_stride(t):
        return t
    return t.contiguous()
