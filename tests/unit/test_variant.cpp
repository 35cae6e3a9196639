#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "variant/variant.hpp"

using namespace cc1d;

TEST_CASE("canonical text round-trips through parse") {
    Variant v;
    v.op = Op::bwd;
    v.layout = Layout::channel_last;
    v.width = 7;
    v.x_dtype = DType::bf16;
    v.weight_dtype = DType::fp32;
    v.activation = Activation::silu;
    v.bias = true;
    v.seq_idx = true;
    v.initial_states = true;
    v.deterministic = false;
    const Variant back = Variant::parse(v.canonical());
    CHECK(back.canonical() == v.canonical());
    CHECK(back == v);
    CHECK(back.packed() == v.packed());
}

TEST_CASE("fields that do not apply to an op are normalized away") {
    Variant a;
    a.op = Op::update;
    a.seq_idx = true;          // not an update feature
    a.layout = Layout::channel_last;
    Variant b;
    b.op = Op::update;
    CHECK(a.canonical() == b.canonical());
    CHECK(a.packed() == b.packed());
    CHECK(a.entry_name() == b.entry_name());
}

TEST_CASE("every distinct variant gets a distinct key, entry name and packed number") {
    std::set<std::string> texts, names;
    std::set<std::uint32_t> numbers;
    int count = 0;
    for (Op op : {Op::fwd, Op::bwd, Op::update, Op::varlen_fwd})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (int width : {1, 2, 16})
                for (DType x : {DType::fp32, DType::fp16, DType::bf16})
                    for (int flags = 0; flags < 512; ++flags) {
                        Variant v;
                        v.op = op;
                        v.layout = layout;
                        v.width = width;
                        v.x_dtype = x;
                        v.weight_dtype = DType::fp32;
                        v.activation = (flags & 1) ? Activation::silu : Activation::none;
                        v.bias = flags & 2;
                        v.seq_idx = flags & 4;
                        v.initial_states = flags & 8;
                        v.final_states = flags & 16;
                        v.cache_seqlens = flags & 32;
                        v.small_call = flags & 64;
                        v.shifted_rows = flags & 128;
                        v.tiled = flags & 256;
                        const std::string text = v.canonical();
                        if (!texts.insert(text).second) continue;   // normalized duplicate
                        ++count;
                        CHECK(names.insert(v.entry_name()).second);
                        CHECK(numbers.insert(v.packed()).second);
                    }
    CHECK(count > 500);
}

TEST_CASE("the backward's shifted-rows modules: 16-bit channel-first main kernels and the tile kernel's, named apart") {
    Variant v;
    v.op = Op::bwd;
    v.x_dtype = v.weight_dtype = DType::bf16;
    v.shifted_rows = true;
    CHECK(v.canonical().find(",shifted_rows=1") != std::string::npos);
    CHECK(v.entry_name().substr(v.entry_name().size() - 8) == "_shifted");
    const Variant back = Variant::parse(v.canonical());
    CHECK(back.shifted_rows);
    CHECK(back == v);
    Variant plain = v;
    plain.shifted_rows = false;
    CHECK(plain.canonical().find("shifted") == std::string::npos);   // other texts as they were
    CHECK(plain.packed() != v.packed());
    // Reset where no such module exists: channel-first fp32, the channel-last register walk
    // (its module, tiled unset, or kernels without a tile kernel), the small-call module,
    // other ops.
    auto reset = [](Variant w) { return !w.normalized().shifted_rows; };
    Variant fp32 = v;
    fp32.x_dtype = DType::fp32;
    CHECK(reset(fp32));
    Variant last = v;
    last.layout = Layout::channel_last;
    CHECK(reset(last));
    // Channel-last: the tile kernel's module has one in 16-bit (fp32 calls of such rows take
    // the register walk), named apart from both.
    Variant tile = last;
    tile.tiled = true;
    for (DType x : {DType::fp16, DType::bf16}) {
        tile.x_dtype = tile.weight_dtype = x;
        CHECK_FALSE(reset(tile));
        CHECK(Variant::parse(tile.canonical()) == tile);
        Variant main_tile = tile;
        main_tile.shifted_rows = false;
        CHECK(main_tile.entry_name() != tile.entry_name());
        CHECK(main_tile.packed() != tile.packed());
    }
    Variant wide = tile;
    wide.width = 5;   // the register walk only
    CHECK(reset(wide));
    Variant tile32 = tile;
    tile32.x_dtype = tile32.weight_dtype = DType::fp32;
    CHECK(reset(tile32));
    Variant small = v;
    small.small_call = true;
    CHECK(reset(small));
    Variant update = v;
    update.op = Op::update;
    CHECK(reset(update));
}

TEST_CASE("the forward's shifted-rows modules: every dtype, channel-first without seq_idx, channel-last with every feature") {
    Variant v;
    v.op = Op::fwd;
    v.shifted_rows = true;
    for (DType x : {DType::fp32, DType::fp16, DType::bf16}) {
        v.x_dtype = v.weight_dtype = x;
        CHECK(v.normalized().shifted_rows);
        CHECK(v.entry_name().substr(v.entry_name().size() - 8) == "_shifted");
        CHECK(Variant::parse(v.canonical()) == v);
    }
    Variant ids = v;
    ids.seq_idx = true;
    CHECK_FALSE(ids.normalized().shifted_rows);
    Variant last = ids;
    last.layout = Layout::channel_last;
    last.initial_states = last.final_states = true;
    last.width = 16;
    CHECK(last.normalized().shifted_rows);
    CHECK(last.entry_name().substr(last.entry_name().size() - 8) == "_shifted");
    CHECK(Variant::parse(last.canonical()) == last);
    Variant small = v;
    small.small_call = true;
    CHECK_FALSE(small.normalized().shifted_rows);
    small.layout = Layout::channel_last;
    CHECK_FALSE(small.normalized().shifted_rows);
}

TEST_CASE("the tile kernel's module: channel-last backward up to width 4 without states, named apart") {
    Variant v;
    v.op = Op::bwd;
    v.layout = Layout::channel_last;
    v.activation = Activation::silu;
    v.tiled = true;
    for (DType x : {DType::fp32, DType::fp16, DType::bf16})
        for (int width : {1, 2, 3, 4}) {
            v.x_dtype = v.weight_dtype = x;
            v.width = width;
            v.seq_idx = width % 2 == 0;   // with seq_idx or without
            CHECK(v.normalized().tiled);
            CHECK(v.canonical().find(",tiled=1") != std::string::npos);
            CHECK(v.entry_name().substr(v.entry_name().size() - 6) == "_tiled");
            const Variant back = Variant::parse(v.canonical());
            CHECK(back.tiled);
            CHECK(back == v);
        }
    Variant plain = v;
    plain.tiled = false;
    CHECK(plain.canonical().find("tiled") == std::string::npos);   // other texts as they were
    CHECK(plain.entry_name().find("tiled") == std::string::npos);
    CHECK(plain.packed() != v.packed());
    // Reset where no such module exists.
    using Change = void (*)(Variant&);
    const std::pair<const char*, Change> elsewhere[] = {
        {"width 5", [](Variant& w) { w.width = 5; }},
        {"initial_states", [](Variant& w) { w.initial_states = true; }},
        {"final_states", [](Variant& w) { w.final_states = true; }},
        {"channel-first", [](Variant& w) { w.layout = Layout::channel_first; }},
        {"small call", [](Variant& w) { w.small_call = true; }},
        {"forward", [](Variant& w) { w.op = Op::fwd; }}};
    for (const auto& [name, change] : elsewhere) {
        CAPTURE(name);
        Variant w = v;
        change(w);
        CHECK_FALSE(w.normalized().tiled);
    }
}

TEST_CASE("parse names the bad field") {
    auto message = [](const std::string& text) {
        try {
            Variant::parse(text);
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::invalid_argument);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message("op=fwd,width=17").find("width 17") != std::string::npos);
    CHECK(message("op=fwd,width=0").find("width 0") != std::string::npos);
    CHECK(message("op=conv").find("unknown op 'conv'") != std::string::npos);
    CHECK(message("x=fp8").find("unknown dtype 'fp8'") != std::string::npos);
    CHECK(message("colour=red").find("unknown field 'colour'") != std::string::npos);
    CHECK(message("width=four").find("expected an integer") != std::string::npos);
    CHECK(message("bias").find("not field=value") != std::string::npos);
}
