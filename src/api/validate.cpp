#include "api/validate.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "common/fail.hpp"

namespace cc1d::validate {
namespace {

std::string shape_text(const Tensor& t) {
    std::string s = "(";
    for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    return s + ")";
}

void require_present(const Tensor& t, const char* what) {
    if (!t.present()) fail(ErrorCode::invalid_argument, "{}: required, but absent", what);
    if (t.data == nullptr && t.numel() != 0) fail(ErrorCode::invalid_argument, "{}: data pointer is null", what);
    // Every kernel accesses whole elements: one at an address off its size's boundary
    // would stop the launch with a misaligned-address fault, which poisons the caller's
    // whole device context.
    const std::size_t size = dtype_size(t.dtype);
    if (reinterpret_cast<std::uintptr_t>(t.data) % size != 0)
        fail(ErrorCode::invalid_argument, "{}: expected an address aligned to its element size ({} bytes, {}), got {}", what, size,
             to_string(t.dtype), t.data);
}

void require_rank(const Tensor& t, int rank, const char* what, const char* dims) {
    if (t.rank != rank)
        fail(ErrorCode::invalid_argument, "{}: expected rank {} {}, got rank {} {}", what, rank, dims, t.rank, shape_text(t));
    for (int i = 0; i < rank; ++i)
        if (t.shape[i] < 0) fail(ErrorCode::invalid_argument, "{}: negative size in shape {}", what, shape_text(t));
}

void require_shape(const Tensor& t, std::initializer_list<std::int64_t> shape, const char* what, const char* dims) {
    require_rank(t, static_cast<int>(shape.size()), what, dims);
    int i = 0;
    for (auto s : shape) {
        if (t.shape[i] != s) {
            std::string want = "(";
            int j = 0;
            for (auto w : shape) want += (j++ ? ", " : "") + std::to_string(w);
            fail(ErrorCode::invalid_argument, "{}: expected shape {} {}, got {}", what, want + ")", dims, shape_text(t));
        }
        ++i;
    }
}

void require_float(const Tensor& t, const char* what) {
    if (t.dtype == DType::int32) fail(ErrorCode::unsupported, "{}: dtype int32 is not supported (expected fp32, fp16 or bf16)", what);
}
void require_dtype(const Tensor& t, DType dtype, const char* what, const char* reason) {
    if (t.dtype != dtype)
        fail(ErrorCode::invalid_argument, "{}: expected dtype {} ({}), got {}", what, to_string(dtype), reason, to_string(t.dtype));
}

// A tensor that is read or written as one block of memory: its byte range.
struct Span {
    std::uintptr_t begin = 0, end = 0;
};
Span span_of(const Tensor& t) {
    if (t.data == nullptr || t.numel() == 0) return {};
    std::int64_t low = 0, high = 0;
    for (int i = 0; i < t.rank; ++i) {
        const std::int64_t reach = (t.shape[i] - 1) * t.strides[i];
        (reach < 0 ? low : high) += reach;
    }
    const auto base = reinterpret_cast<std::uintptr_t>(t.data);
    const auto size = static_cast<std::int64_t>(dtype_size(t.dtype));
    return {base + static_cast<std::uintptr_t>(low * size), base + static_cast<std::uintptr_t>((high + 1) * size)};
}

void require_disjoint(const Span& a, const char* written_name, const Span& b, const char* other_name) {
    if (a.begin == a.end || b.begin == b.end) return;
    if (a.begin < b.end && b.begin < a.end)
        fail(ErrorCode::invalid_argument, "{}: its memory overlaps {} (in-place operation is not supported)", written_name,
             other_name);
}

// A written tensor whose elements share memory (a stride of 0, as an expanded view has,
// or strides that interleave) would be written by several threads in no fixed order.
// Sufficient test: taking the dims of size > 1 by increasing |stride|, each stride steps
// past every element the smaller dims reach.
void require_distinct_elements(const Tensor& t, const char* what) {
    if (t.data == nullptr || t.numel() == 0) return;
    std::pair<std::int64_t, std::int64_t> dims[Tensor::max_rank];   // (|stride|, size)
    int n = 0;
    for (int i = 0; i < t.rank; ++i)
        if (t.shape[i] > 1) dims[n++] = {t.strides[i] < 0 ? -t.strides[i] : t.strides[i], t.shape[i]};
    for (int i = 1; i < n; ++i)   // (at most 3: insertion)
        for (int j = i; j > 0 && dims[j] < dims[j - 1]; --j) std::swap(dims[j], dims[j - 1]);
    std::int64_t reach = 0;   // the largest offset the dims so far reach
    for (int i = 0; i < n; ++i) {
        if (dims[i].first <= reach) {
            std::string strides;
            for (int j = 0; j < t.rank; ++j) strides += (j ? ", " : "") + std::to_string(t.strides[j]);
            fail(ErrorCode::invalid_argument,
                 "{}: strides ({}) for shape {} give several elements one address; a written tensor needs distinct "
                 "elements (make it contiguous)",
                 what, strides, shape_text(t));
        }
        reach += dims[i].first * (dims[i].second - 1);
    }
}

struct Named {
    const Tensor* tensor;
    const char* name;
};
// Every written tensor has distinct elements and shares no memory with another written
// tensor or with any tensor the call reads (absent and empty tensors take no part). Each
// span is computed once: this runs on every call.
void require_separate(std::initializer_list<Named> written, std::initializer_list<Named> read) {
    constexpr std::size_t kMost = 8;   // the ops name at most 4 written and 7 read tensors
    const Named* w = written.begin();
    const Named* r = read.begin();
    Span written_spans[kMost], read_spans[kMost];
    for (std::size_t i = 0; i < written.size(); ++i) {
        require_distinct_elements(*w[i].tensor, w[i].name);
        written_spans[i] = span_of(*w[i].tensor);
    }
    for (std::size_t j = 0; j < read.size(); ++j) read_spans[j] = span_of(*r[j].tensor);
    for (std::size_t i = 0; i < written.size(); ++i) {
        for (std::size_t j = i + 1; j < written.size(); ++j)
            require_disjoint(written_spans[j], w[j].name, written_spans[i], w[i].name);
        for (std::size_t j = 0; j < read.size(); ++j) require_disjoint(written_spans[i], w[i].name, read_spans[j], r[j].name);
    }
}

// True when dim `axis` of `t` steps by one element, or has one element (its stride is never used).
bool unit_axis(const Tensor& t, int axis) { return t.strides[axis] == 1 || t.shape[axis] == 1; }

void require_unit_stride(const Tensor& t, const char* what) {
    if (t.numel() == 0) return;
    bool unit = false;
    for (int i = 0; i < t.rank; ++i) unit = unit || unit_axis(t, i);
    if (!unit) fail(ErrorCode::invalid_argument, "{}: expected one dimension with stride 1 (make it contiguous)", what);
}

// States (B, D, K): in x's dtype, one unit stride.
void check_states(const Tensor& t, std::int64_t batch, std::int64_t dim, int width, DType x_dtype, const char* what) {
    if (width == 1) fail(ErrorCode::invalid_argument, "{}: width 1 has no states (expected no {})", what, what);
    require_present(t, what);
    require_shape(t, {batch, dim, width - 1}, what, "(batch, dim, width - 1)");
    require_dtype(t, x_dtype, what, "the dtype of x");
    require_unit_stride(t, what);
}

void check_seq_idx(const Tensor& t, std::int64_t batch, std::int64_t seqlen) {
    require_present(t, "seq_idx");
    require_shape(t, {batch, seqlen}, "seq_idx", "(batch, seqlen)");
    require_dtype(t, DType::int32, "seq_idx", "sequence ids");
}

struct ConvShape {
    std::int64_t batch, dim, seqlen;
    int width;
};

// x (B, D, L), weight (D, W), bias (D), out-like tensors of x's shape, dtype and layout.
ConvShape check_conv_inputs(const Tensor& x, const Tensor& weight, const Tensor& bias, Variant& v) {
    require_present(x, "x");
    require_rank(x, 3, "x", "(batch, dim, seqlen)");
    require_float(x, "x");
    v.layout = layout_of(x, "x");
    v.x_dtype = x.dtype;
    require_present(weight, "weight");
    require_rank(weight, 2, "weight", "(dim, width)");
    require_float(weight, "weight");
    if (weight.shape[0] != x.shape[1])
        fail(ErrorCode::invalid_argument, "weight: expected {} rows (the dim of x), got shape {}", x.shape[1], shape_text(weight));
    if (weight.shape[1] < 1 || weight.shape[1] > Variant::max_width)
        fail(ErrorCode::unsupported, "weight: width {} is outside the supported 1..{}", weight.shape[1], Variant::max_width);
    v.weight_dtype = weight.dtype;
    v.width = static_cast<int>(weight.shape[1]);
    v.bias = bias.present();
    if (v.bias) {
        require_present(bias, "bias");
        require_shape(bias, {x.shape[1]}, "bias", "(dim)");
        require_dtype(bias, weight.dtype, "bias", "the dtype of weight");
    }
    return {x.shape[0], x.shape[1], x.shape[2], v.width};
}

void check_like_x(const Tensor& t, const Tensor& x, Layout layout, const char* what) {
    require_present(t, what);
    require_shape(t, {x.shape[0], x.shape[1], x.shape[2]}, what, "(the shape of x)");
    require_dtype(t, x.dtype, what, "the dtype of x");
    // Readable in x's layout: a unit axis where that layout has it (seqlen channel-first, dim channel-last).
    if (t.numel() != 0 && !unit_axis(t, layout == Layout::channel_first ? 2 : 1))
        fail(ErrorCode::invalid_argument, "{}: expected the {} layout of x, got {}", what, to_string(layout),
             to_string(layout_of(t, what)));
}

// The layout a call reads x and the tensors of x's shape in: x's own (`own`, layout_of's
// answer) where each of them is readable in it, else the other where x and each of them are. x of one
// channel (or of one position) has both: a channel-last x sliced to one channel is
// channel-first by its strides too, while its dout, sliced from a wider tensor, may have
// its positions a row apart. A tensor readable in neither is left to check_like_x to name.
Layout layout_for(const Tensor& x, Layout own, std::initializer_list<const Tensor*> like_x) {
    auto readable = [&](Layout layout) {
        const int axis = layout == Layout::channel_first ? 2 : 1;
        if (!unit_axis(x, axis)) return false;
        for (const Tensor* t : like_x)
            if (t->rank == 3 && t->numel() != 0 && !unit_axis(*t, axis)) return false;
        return true;
    };
    const Layout other = own == Layout::channel_first ? Layout::channel_last : Layout::channel_first;
    return readable(own) || !readable(other) ? own : other;
}

}  // namespace

Layout layout_of(const Tensor& t, const char* what) {
    // A unit stride along L means channel-first; along D, channel-last. Size-1 dims carry
    // any stride, so they count as unit.
    const bool l_unit = unit_axis(t, 2);
    const bool d_unit = unit_axis(t, 1);
    if (t.strides[2] == 1) return Layout::channel_first;
    if (t.strides[1] == 1) return Layout::channel_last;
    if (l_unit) return Layout::channel_first;
    if (d_unit) return Layout::channel_last;
    fail(ErrorCode::invalid_argument,
         "{}: strides ({}, {}, {}) have no unit stride along seqlen (channel-first) or dim (channel-last); make it contiguous",
         what, t.strides[0], t.strides[1], t.strides[2]);
}

Variant forward(const ForwardArgs& args) {
    Variant v;
    v.op = Op::fwd;
    v.activation = args.activation;
    const ConvShape s = check_conv_inputs(args.x, args.weight, args.bias, v);
    v.layout = layout_for(args.x, v.layout, {&args.out});
    check_like_x(args.out, args.x, v.layout, "out");
    v.seq_idx = args.seq_idx.present();
    if (v.seq_idx) check_seq_idx(args.seq_idx, s.batch, s.seqlen);
    v.initial_states = args.initial_states.present();
    if (v.initial_states) check_states(args.initial_states, s.batch, s.dim, s.width, v.x_dtype, "initial_states");
    v.final_states = args.final_states.present();
    if (v.final_states) check_states(args.final_states, s.batch, s.dim, s.width, v.x_dtype, "final_states");
    require_separate({{&args.out, "out"}, {&args.final_states, "final_states"}},
                     {{&args.x, "x"}, {&args.weight, "weight"}, {&args.bias, "bias"}, {&args.seq_idx, "seq_idx"},
                      {&args.initial_states, "initial_states"}});
    return v.normalized();
}

Variant backward(const BackwardArgs& args) {
    Variant v;
    v.op = Op::bwd;
    v.activation = args.activation;
    v.deterministic = args.deterministic;
    const ConvShape s = check_conv_inputs(args.x, args.weight, args.bias, v);
    v.layout = layout_for(args.x, v.layout, {&args.dout, &args.dx});
    check_like_x(args.dout, args.x, v.layout, "dout");
    check_like_x(args.dx, args.x, v.layout, "dx");
    require_present(args.dweight, "dweight");
    require_shape(args.dweight, {s.dim, s.width}, "dweight", "(dim, width)");
    if (args.dweight.dtype != DType::fp32 && args.dweight.dtype != args.weight.dtype)
        fail(ErrorCode::invalid_argument, "dweight: expected dtype fp32 or {} (the weight's), got {}", to_string(args.weight.dtype),
             to_string(args.dweight.dtype));
    if (args.dbias.present()) {
        if (!v.bias) fail(ErrorCode::invalid_argument, "dbias: given, but the forward had no bias");
        require_present(args.dbias, "dbias");
        require_shape(args.dbias, {s.dim}, "dbias", "(dim)");
        require_dtype(args.dbias, args.dweight.dtype, "dbias", "the dtype of dweight");
    }
    v.seq_idx = args.seq_idx.present();
    if (v.seq_idx) check_seq_idx(args.seq_idx, s.batch, s.seqlen);
    v.initial_states = args.initial_states.present();
    if (v.initial_states) check_states(args.initial_states, s.batch, s.dim, s.width, v.x_dtype, "initial_states");
    if (args.dinitial_states.present()) {
        if (!v.initial_states) fail(ErrorCode::invalid_argument, "dinitial_states: given, but initial_states is absent");
        check_states(args.dinitial_states, s.batch, s.dim, s.width, v.x_dtype, "dinitial_states");
    }
    v.final_states = args.dfinal_states.present();
    if (v.final_states) check_states(args.dfinal_states, s.batch, s.dim, s.width, v.x_dtype, "dfinal_states");
    require_separate({{&args.dx, "dx"}, {&args.dweight, "dweight"}, {&args.dbias, "dbias"}, {&args.dinitial_states, "dinitial_states"}},
                     {{&args.x, "x"}, {&args.weight, "weight"}, {&args.bias, "bias"}, {&args.dout, "dout"},
                      {&args.seq_idx, "seq_idx"}, {&args.initial_states, "initial_states"}, {&args.dfinal_states, "dfinal_states"}});
    if (args.workspace == nullptr && args.workspace_bytes != 0)
        fail(ErrorCode::invalid_argument, "workspace: null, but workspace_bytes is {}", args.workspace_bytes);
    // The partial sums in it are fp32 (the seq masks find their own 256-byte boundary).
    if (reinterpret_cast<std::uintptr_t>(args.workspace) % alignof(float) != 0)
        fail(ErrorCode::invalid_argument, "workspace: expected a 4-byte aligned address, got {}", args.workspace);
    return v.normalized();
}

Variant update(UpdateArgs& args) {
    Variant v;
    v.op = Op::update;
    v.activation = args.activation;
    require_present(args.x, "x");
    // (B, D) is one token per row: view it as (B, D, 1).
    for (Tensor* t : {&args.x, &args.out}) {
        if (t->rank == 2) {
            t->rank = 3;
            t->shape[2] = 1;
            t->strides[2] = 1;
        }
    }
    const ConvShape s = check_conv_inputs(args.x, args.weight, args.bias, v);
    require_unit_stride(args.x, "x");
    require_present(args.out, "out");
    require_shape(args.out, {s.batch, s.dim, s.seqlen}, "out", "(the shape of x)");
    require_dtype(args.out, args.x.dtype, "out", "the dtype of x");
    require_unit_stride(args.out, "out");
    require_present(args.conv_state, "conv_state");
    require_rank(args.conv_state, 3, "conv_state", "(cache batch, dim, state_len)");
    require_dtype(args.conv_state, args.x.dtype, "conv_state", "the dtype of x");
    require_unit_stride(args.conv_state, "conv_state");
    if (args.conv_state.shape[1] != s.dim)
        fail(ErrorCode::invalid_argument, "conv_state: expected dim {} (the dim of x), got shape {}", s.dim, shape_text(args.conv_state));
    if (args.conv_state.shape[2] < std::max(1, s.width - 1))
        fail(ErrorCode::invalid_argument, "conv_state: expected state_len >= max(1, width - 1) = {}, got shape {}",
             std::max(1, s.width - 1), shape_text(args.conv_state));
    v.cache_seqlens = args.cache_seqlens.present();
    if (v.cache_seqlens) {
        require_present(args.cache_seqlens, "cache_seqlens");
        require_shape(args.cache_seqlens, {s.batch}, "cache_seqlens", "(batch)");
        require_dtype(args.cache_seqlens, DType::int32, "cache_seqlens", "positions");
    }
    v.state_indices = args.conv_state_indices.present();
    if (v.state_indices) {
        require_present(args.conv_state_indices, "conv_state_indices");
        require_shape(args.conv_state_indices, {s.batch}, "conv_state_indices", "(batch)");
        require_dtype(args.conv_state_indices, DType::int32, "conv_state_indices", "cache slots");
    } else if (args.conv_state.shape[0] < s.batch) {
        fail(ErrorCode::invalid_argument, "conv_state: expected at least {} rows (the batch of x) without conv_state_indices, got shape {}",
             s.batch, shape_text(args.conv_state));
    }
    // (conv_state is read and written in place by design)
    require_separate({{&args.conv_state, "conv_state"}, {&args.out, "out"}},
                     {{&args.x, "x"}, {&args.weight, "weight"}, {&args.bias, "bias"}, {&args.cache_seqlens, "cache_seqlens"},
                      {&args.conv_state_indices, "conv_state_indices"}});
    return v.normalized();
}

Variant varlen_forward(const VarlenForwardArgs& args) {
    Variant v;
    v.op = Op::varlen_fwd;
    v.activation = args.activation;
    require_present(args.x, "x");
    require_rank(args.x, 2, "x", "(dim, total tokens)");
    require_float(args.x, "x");
    // View (D, total) as (1, D, total) to share the checks of the batched ops.
    auto as_batched = [](const Tensor& t) {
        Tensor b = t;
        if (t.rank == 2) {
            b.rank = 3;
            b.shape[2] = t.shape[1];
            b.strides[2] = t.strides[1];
            b.shape[1] = t.shape[0];
            b.strides[1] = t.strides[0];
            b.shape[0] = 1;
            b.strides[0] = t.shape[0] * t.shape[1];
        }
        return b;
    };
    const Tensor x = as_batched(args.x);
    const ConvShape s = check_conv_inputs(x, args.weight, args.bias, v);
    require_present(args.out, "out");
    require_rank(args.out, 2, "out", "(dim, total tokens)");
    check_like_x(as_batched(args.out), x, v.layout, "out");
    require_present(args.cu_seqlens, "cu_seqlens");
    require_rank(args.cu_seqlens, 1, "cu_seqlens", "(num sequences + 1)");
    require_dtype(args.cu_seqlens, DType::int32, "cu_seqlens", "offsets");
    if (args.cu_seqlens.shape[0] < 1) fail(ErrorCode::invalid_argument, "cu_seqlens: expected at least 1 entry (N + 1 offsets)");
    const std::int64_t num_seqs = args.cu_seqlens.shape[0] - 1;
    v.initial_states = args.conv_states.present();
    if (v.initial_states) {
        require_present(args.conv_states, "conv_states");
        require_rank(args.conv_states, 3, "conv_states", "(slots, dim, state_len)");
        require_dtype(args.conv_states, args.x.dtype, "conv_states", "the dtype of x");
        require_unit_stride(args.conv_states, "conv_states");
        if (args.conv_states.shape[1] != s.dim || args.conv_states.shape[2] < s.width - 1)
            fail(ErrorCode::invalid_argument, "conv_states: expected (slots, {}, >= {}), got {}", s.dim, s.width - 1,
                 shape_text(args.conv_states));
        if (s.width == 1) fail(ErrorCode::invalid_argument, "conv_states: width 1 has no states (expected none)");
        if (!args.cache_indices.present() && args.conv_states.shape[0] < num_seqs)
            fail(ErrorCode::invalid_argument, "conv_states: expected at least {} slots (one per sequence) without cache_indices, got {}",
                 num_seqs, shape_text(args.conv_states));
    }
    for (auto [t, name] : {std::pair{&args.cache_indices, "cache_indices"}, std::pair{&args.has_initial_state, "has_initial_state"}}) {
        if (!t->present()) continue;
        if (!v.initial_states) fail(ErrorCode::invalid_argument, "{}: given, but conv_states is absent", name);
        require_present(*t, name);
        require_shape(*t, {num_seqs}, name, "(num sequences)");
        require_dtype(*t, DType::int32, name, "int32 per sequence");
    }
    require_separate({{&args.conv_states, "conv_states"}, {&args.out, "out"}},
                     {{&args.x, "x"}, {&args.weight, "weight"}, {&args.bias, "bias"}, {&args.cu_seqlens, "cu_seqlens"},
                      {&args.cache_indices, "cache_indices"}, {&args.has_initial_state, "has_initial_state"}});
    return v.normalized();
}

}  // namespace cc1d::validate
