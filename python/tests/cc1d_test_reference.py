"""Pure-PyTorch fp64 references of SEMANTICS.md, written independently of the library:
a loop over the kernel taps on a padded copy of x. Differentiable, so autograd on
fp64 inputs gives the reference gradients."""

import torch
import torch.nn.functional as F


def forward(x, weight, bias=None, seq_idx=None, initial_states=None, silu=False):
    """Returns (out, final_states), both float64. x (B, D, L), weight (D, W)."""
    batch, dim, length = x.shape
    width = weight.shape[1]
    k_hist = width - 1
    x = x.double()
    w = weight.double()
    if initial_states is not None:
        history = initial_states.double()
    else:
        history = x.new_zeros(batch, dim, k_hist)
    padded = torch.cat([history, x], dim=2)       # padded[..., K + p] is x̃[p]

    if seq_idx is not None:
        ids = seq_idx.long()
        # Positions before the row start feed the row's first sequence when states are
        # given, and no sequence (-1) otherwise.
        if initial_states is not None and length > 0:
            before = ids[:, :1].expand(batch, k_hist)
        else:
            before = torch.full((batch, k_hist), -1, dtype=torch.long, device=x.device)
        padded_ids = torch.cat([before, ids], dim=1)

    out = x.new_zeros(batch, dim, length)
    for k in range(width):
        term = w[:, k, None] * padded[:, :, k:k + length]     # reads x̃[t − K + k]
        if seq_idx is not None:
            same = (padded_ids[:, k:k + length] == ids).to(term.dtype)
            term = term * same[:, None, :]
        out = out + term
    if bias is not None:
        out = out + bias.double()[None, :, None]
    if silu:
        out = F.silu(out)
    if seq_idx is not None:
        out = out * (ids >= 0).to(out.dtype)[:, None, :]
    final_states = padded[:, :, length:length + k_hist]   # x̃[L − K + j]
    return out, final_states


def update(x, conv_state, weight, bias=None, silu=False, cache_seqlens=None, conv_state_indices=None,
           pad_slot_id=-1):
    """Returns (out float64 with x's shape, the new conv_state in its own dtype)."""
    squeeze = x.dim() == 2
    tokens = x.unsqueeze(-1) if squeeze else x
    batch, dim, steps = tokens.shape
    width = weight.shape[1]
    k_hist = width - 1
    state_len = conv_state.shape[2]
    state = conv_state.clone()
    w = weight.double()
    out = torch.zeros(batch, dim, steps, dtype=torch.float64, device=x.device)
    for b in range(batch):
        slot = int(conv_state_indices[b]) if conv_state_indices is not None else b
        if slot == pad_slot_id:
            continue
        row = conv_state[slot]
        if cache_seqlens is None:
            u = torch.cat([row, tokens[b]], dim=1)                         # (D, S + T)
            window = u[:, state_len - k_hist:].double()                    # last K history, then tokens
            state[slot] = u[:, -state_len:]
        else:
            c = int(cache_seqlens[b])
            history = torch.stack([row[:, (c - k_hist + j) % state_len] for j in range(k_hist)], dim=1) \
                if k_hist > 0 else row[:, :0]
            window = torch.cat([history, tokens[b]], dim=1).double()       # (D, K + T)
            for t in range(steps):
                state[slot][:, (c + t) % state_len] = tokens[b][:, t]
        for t in range(steps):
            value = (w * window[:, t:t + width]).sum(dim=1)
            if bias is not None:
                value = value + bias.double()
            out[b, :, t] = F.silu(value) if silu else value
    return (out.squeeze(-1) if squeeze else out), state


def backward(x, weight, bias, dout, seq_idx=None, initial_states=None, dfinal_states=None, silu=False):
    """The gradient formulas of SEMANTICS.md "Backward", written out (no autograd), in
    float64. Returns (dx, dweight, dbias, dinitial_states)."""
    batch, dim, length = x.shape
    width = weight.shape[1]
    k_hist = width - 1
    x, w, dout = x.double(), weight.double(), dout.double()
    z, _ = forward(x, weight, bias, seq_idx, initial_states, silu=False)   # 0 at padding
    if silu:
        s = torch.sigmoid(z)
        g = dout * s * (1 + z * (1 - s))
    else:
        g = dout.clone()
    history = initial_states.double() if initial_states is not None else x.new_zeros(batch, dim, k_hist)
    padded = torch.cat([history, x], dim=2)
    if seq_idx is not None:
        ids = seq_idx.long()
        g = g * (ids >= 0).to(g.dtype)[:, None, :]
        if initial_states is not None and length > 0:
            before = ids[:, :1].expand(batch, k_hist)
        else:
            before = torch.full((batch, k_hist), -1, dtype=torch.long, device=x.device)
        padded_ids = torch.cat([before, ids], dim=1)

    dpadded = torch.zeros_like(padded)
    dweight = torch.zeros_like(w)
    for k in range(width):
        gk = g
        if seq_idx is not None:
            gk = g * (padded_ids[:, k:k + length] == ids).to(g.dtype)[:, None, :]
        dpadded[:, :, k:k + length] += gk * w[:, k, None]
        dweight[:, k] = (gk * padded[:, :, k:k + length]).sum(dim=(0, 2))
    if dfinal_states is not None:
        dpadded[:, :, length:length + k_hist] += dfinal_states.double()
    dbias = g.sum(dim=(0, 2)) if bias is not None else None
    return dpadded[:, :, k_hist:], dweight, dbias, dpadded[:, :, :k_hist]


def varlen(x, weight, bias, query_start_loc, cache_indices=None, has_initial_state=None, conv_states=None,
           silu=False, pad_slot_id=-1):
    """Packed prefill (SEMANTICS.md, variable-length prefill). x (D, total). Returns
    (out float64 (D, total), the conv_states after the call in their dtype, or None):
    each sequence is the forward above on its tokens, with the last K entries of its
    slot as history where has_initial_state says so (zeros otherwise), and its slot's
    last K entries become the sequence's final states; a sequence whose cache index is
    pad_slot_id reads and writes no slot. Tokens outside every sequence give 0."""
    dim, total = x.shape
    k_hist = weight.shape[1] - 1
    starts = query_start_loc.tolist()
    out = torch.zeros(dim, total, dtype=torch.float64, device=x.device)
    states = conv_states.clone() if conv_states is not None else None
    for s in range(len(starts) - 1):
        begin, end = starts[s], starts[s + 1]
        slot = int(cache_indices[s]) if cache_indices is not None else s
        padding = cache_indices is not None and slot == pad_slot_id
        reads = (conv_states is not None and has_initial_state is not None and bool(has_initial_state[s])
                 and not padding)
        history = conv_states[slot, :, conv_states.shape[2] - k_hist:][None] if reads else None
        seq_out, final = forward(x[None, :, begin:end], weight, bias, initial_states=history, silu=silu)
        out[:, begin:end] = seq_out[0]
        if states is not None and not padding and k_hist > 0:
            states[slot, :, states.shape[2] - k_hist:] = final[0].to(states.dtype)
    return out, states
