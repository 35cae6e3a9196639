"""Memory layouts of (B, D, L) tensors (and of the packed prefill's (D, total)), as the
library reads them from the strides.

channel-first: stride(2) == 1 (each channel's row is contiguous);
channel-last:  stride(1) == 1 (stored as (B, L, D)).
Inputs in either layout pass through untouched; anything else is copied once into
the channel-first layout. Outputs are allocated in the layout of x, by one rule that
the real and the fake (tracing) implementations share, so both give the same strides.
"""

# Host time: x.stride() and x.shape cost about half of x.stride(i) and x.size(i), which
# go through torch's overload parsing; and torch parses sizes given one by one faster
# than one tuple of them (a torch.Size most of all). All matter on the eager fast path.


def is_channel_last(x):
    """True when x is used as channel-last. A channel-last view with D == 1 is copied
    to channel-first instead: with one channel its strides cannot be told apart."""
    strides = x.stride()
    return strides[2] != 1 and strides[1] == 1 and x.shape[1] > 1


def empty_conv(shape, channel_last, like):
    """An uninitialized (B, D, L) tensor in the given layout, on like's device and dtype.
    like.new_empty, not torch.empty(dtype=like.dtype, device=like.device): the same
    tensor, without two attribute reads and the parsing of two keyword arguments."""
    batch, dim, length = shape
    if channel_last:
        return like.new_empty(batch, length, dim).transpose(1, 2)
    return like.new_empty(batch, dim, length)


def conv_input_and_layout(x):
    """as_conv_input(x), and is_channel_last of it, from one read of x's strides (the
    forward op needs both; a read costs host time on every call)."""
    strides = x.stride()
    if strides[2] == 1:
        return x, False
    if strides[1] == 1 and x.shape[1] > 1:      # is_channel_last(x)
        return x, True
    copy = empty_conv(x.shape, False, x)
    copy.copy_(x)
    return copy, False


def as_conv_input(x):
    """x itself when its layout is one the library reads, else a channel-first copy."""
    return conv_input_and_layout(x)[0]


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


# Packed prefill: x (dim, total_tokens), tokens contiguous or a (total_tokens, dim) tensor
# transposed (channels contiguous).


def tokens_channel_last(x):
    """Whether x (dim, total) is read with its channels contiguous rather than its
    tokens; one channel counts as tokens contiguous."""
    strides = x.stride()
    return strides[1] != 1 and strides[0] == 1 and x.shape[0] > 1


def tokens_input_and_layout(x):
    """x itself when the library reads it, else a copy with contiguous tokens; and
    whether it is read channels-contiguous."""
    if tokens_channel_last(x):
        return x, True
    if x.stride(1) != 1 and x.shape[1] > 1:
        return x.contiguous(), False
    return x, False


def empty_tokens(shape, channel_last, like):
    """An uninitialized (dim, total) tensor in the given layout, on like's device and dtype."""
    dim, total = shape
    return like.new_empty(total, dim).t() if channel_last else like.new_empty(dim, total)
