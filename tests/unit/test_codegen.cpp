#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>

#include "codegen/embedded_templates.hpp"
#include "codegen/render.hpp"

using namespace cc1d;

TEST_CASE("rendered source is self-contained and carries the variant") {
    Variant v;
    v.op = Op::fwd;
    v.width = 5;
    v.x_dtype = DType::bf16;
    v.activation = Activation::silu;
    for (const char* backend : {"cuda", "hip"}) {
        const auto source = codegen::render_source(v, backend);
        CHECK(source.text.find("#include") == std::string::npos);
        CHECK(source.text.find("#define CC1D_WIDTH 5") != std::string::npos);
        CHECK(source.text.find("#define CC1D_SILU 1") != std::string::npos);
        CHECK(source.text.find("#define CC1D_X_DTYPE 2") != std::string::npos);
        CHECK(source.text.find("#define CC1D_ENTRY " + v.entry_name()) != std::string::npos);
        CHECK(source.text.find("struct cc1d_fwd_params") != std::string::npos);
        CHECK(source.name == v.entry_name() + ".cu");
    }
    CHECK(codegen::render_source(v, "cuda").text.find("CC1D_BACKEND_CUDA") != std::string::npos);
    CHECK(codegen::render_source(v, "hip").text.find("CC1D_BACKEND_HIP") != std::string::npos);
}

TEST_CASE("backward and update sources name their second kernel; varlen has none") {
    Variant v;
    v.op = Op::bwd;
    auto source = codegen::render_source(v, "cuda");
    CHECK(source.second_entry == v.entry_name() + "_reduce");
    CHECK(source.text.find("#define CC1D_ENTRY_REDUCE " + source.second_entry) != std::string::npos);
    v.op = Op::update;
    source = codegen::render_source(v, "hip");
    CHECK(source.second_entry == v.entry_name() + "_registers");
    CHECK(source.text.find("#define CC1D_ENTRY_REGISTERS " + source.second_entry) != std::string::npos);
    v.op = Op::varlen_fwd;
    source = codegen::render_source(v, "cuda");
    CHECK(source.second_entry.empty());
    CHECK(source.text.find("CC1D_ENTRY_REDUCE") == std::string::npos);
}

TEST_CASE("the channel-last backward's tile kernel is a module of its own, up to width 4 without states") {
    Variant v;
    v.op = Op::bwd;
    v.layout = Layout::channel_last;
    v.activation = Activation::silu;
    v.bias = true;
    const std::string tile_text = codegen::template_text("bwd_channel_last_tile.cu");
    const std::string walk_text = codegen::template_text("bwd_channel_last.cu");
    for (DType x : {DType::fp16, DType::bf16, DType::fp32})
        for (int width : {1, 4, 5}) {
            v.x_dtype = v.weight_dtype = x;
            v.width = width;
            CAPTURE(to_string(x));
            CAPTURE(width);
            // The register walk's module: the walk and the reduce kernel, never the tile kernel.
            v.tiled = false;
            const auto walk = codegen::render_source(v, "hip");
            CHECK(walk.text.find(walk_text) != std::string::npos);
            CHECK(walk.text.find(tile_text) == std::string::npos);
            CHECK(walk.third_entry.empty());
            CHECK(walk.second_entry == v.entry_name() + "_reduce");
            // The tile kernel's module where the variant has one: the tile kernel as the
            // main entry, then the reduce kernel; elsewhere the flag goes (normalized).
            v.tiled = true;
            const bool tiled = width <= 4;
            CHECK(v.normalized().tiled == tiled);
            const auto tile = codegen::render_source(v, "hip");
            CHECK((tile.text.find(tile_text) != std::string::npos) == tiled);
            CHECK((tile.text.find(walk_text) == std::string::npos) == tiled);
            CHECK(tile.entry == v.entry_name());
            CHECK((tile.entry.find("_tiled") != std::string::npos) == tiled);
            CHECK(tile.third_entry.empty());
            CHECK(tile.second_entry == tile.entry + "_reduce");
            CHECK(tile.text.find("#define CC1D_ENTRY " + tile.entry + "\n") != std::string::npos);
            CHECK(tile.text.find("#define CC1D_ENTRY_REDUCE " + tile.second_entry + "\n") != std::string::npos);
            if (tiled) CHECK(tile.entry != walk.entry);
            else CHECK(tile.entry == walk.entry);
        }
    // With seq_idx too; not with states, in channel-first layout, as a small call, or
    // forward: the flag asked for there leaves the family's own template.
    v.x_dtype = v.weight_dtype = DType::bf16;
    v.width = 4;
    v.tiled = true;
    CHECK(codegen::family_template(v.normalized()) == "bwd_channel_last_tile.cu");
    using Change = void (*)(Variant&);
    const std::pair<Change, const char*> elsewhere[] = {
        {[](Variant& w) { w.seq_idx = true; }, "bwd_channel_last_tile.cu"},
        {[](Variant& w) { w.initial_states = true; }, "bwd_channel_last.cu"},
        {[](Variant& w) { w.final_states = true; }, "bwd_channel_last.cu"},
        {[](Variant& w) { w.layout = Layout::channel_first; }, "bwd_channel_first.cu"},
        {[](Variant& w) { w.small_call = true; }, "bwd_small.cu"},
        {[](Variant& w) { w.op = Op::fwd; }, "fwd_channel_last.cu"}};
    for (const auto& [change, family] : elsewhere) {
        Variant w = v;
        change(w);
        CAPTURE(w.canonical());
        CHECK(codegen::family_template(w.normalized()) == family);
    }
}

TEST_CASE("a small-call backward variant is bwd_small.cu, either layout; other backward modules lack it") {
    Variant v;
    v.op = Op::bwd;
    for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
        v.layout = layout;
        v.small_call = false;
        auto source = codegen::render_source(v, "cuda");
        CHECK(source.text.find(codegen::template_text("bwd_small.cu")) == std::string::npos);
        v.small_call = true;
        source = codegen::render_source(v, "cuda");
        CHECK(codegen::family_template(v) == "bwd_small.cu");
        CHECK(source.text.find(codegen::template_text("bwd_small.cu")) != std::string::npos);
        CHECK(source.text.find(codegen::template_text(layout == Layout::channel_last ? "bwd_channel_last.cu"
                                                                                     : "bwd_channel_first.cu")) ==
              std::string::npos);
        CHECK(source.entry == v.entry_name());
        CHECK(source.entry.size() > 6);
        CHECK(source.entry.substr(source.entry.size() - 6) == "_small");
        CHECK(source.text.find("#define CC1D_CHANNEL_LAST " + std::to_string(int(layout == Layout::channel_last))) !=
              std::string::npos);
    }
}

TEST_CASE("channel-first small-call backward modules up to width 4 without seq_idx or states carry the vector kernel") {
    Variant v;
    v.op = Op::bwd;
    const std::string vectors_text = codegen::template_text("bwd_channel_first_vectors.cu");
    auto carries = [&](const Variant& variant) {
        const auto source = codegen::render_source(variant, "cuda");
        const bool third = source.third_entry == source.entry + "_vectors";
        CHECK((source.third_entry.empty() || third));
        CHECK(third == (source.text.find(vectors_text) != std::string::npos));
        if (third) CHECK(source.text.find("#define CC1D_ENTRY_VECTORS " + source.third_entry) != std::string::npos);
        // its one-vector form as the module's second kernel (a main module's is the reduce)
        CHECK(source.second_entry == (!variant.small_call ? source.entry + "_reduce"
                                      : third             ? source.entry + "_vectors_one"
                                                          : ""));
        if (third)
            CHECK(source.text.find("#define CC1D_ENTRY_VECTORS_ONE " + source.second_entry) != std::string::npos);
        return third;
    };
    for (bool small : {true, false}) {   // (the main modules never carry it)
        CAPTURE(small);
        v.small_call = small;
        for (int width = 1; width <= 4; ++width) {
            v.width = width;
            CHECK(carries(v) == small);
        }
        v.width = 5;
        CHECK_FALSE(carries(v));
        v.width = 4;
        for (bool* feature : {&v.seq_idx, &v.initial_states, &v.final_states}) {
            *feature = true;
            CHECK_FALSE(carries(v));
            *feature = false;
        }
        v.layout = Layout::channel_last;
        CHECK(codegen::render_source(v, "cuda").text.find(vectors_text) == std::string::npos);
        v.layout = Layout::channel_first;
    }
}

namespace {
bool has_second(const Variant& variant) { return !codegen::render_source(variant, "cuda").second_entry.empty(); }
}  // namespace

TEST_CASE("the shifted-rows module of the channel-first backward: its macro and entries") {
    Variant v;
    v.op = Op::bwd;
    v.x_dtype = v.weight_dtype = DType::fp16;
    auto source = codegen::render_source(v, "cuda");
    CHECK(source.text.find("#define CC1D_SHIFTED_ROWS 0") != std::string::npos);
    v.shifted_rows = true;
    source = codegen::render_source(v, "hip");
    CHECK(source.text.find("#define CC1D_SHIFTED_ROWS 1") != std::string::npos);
    CHECK(codegen::family_template(v) == "bwd_channel_first.cu");
    CHECK(source.entry == v.entry_name());
    CHECK(source.second_entry == v.entry_name() + "_reduce");
}

TEST_CASE("every channel-last forward variant is the tile kernel alone") {
    Variant v;
    v.op = Op::fwd;
    v.layout = Layout::channel_last;
    v.bias = true;
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16})
        for (int width = 1; width <= Variant::max_width; ++width)
            for (bool seq_idx : {false, true}) {
                CAPTURE(width);
                CAPTURE(seq_idx);
                v.x_dtype = v.weight_dtype = dtype;
                v.width = width;
                v.seq_idx = seq_idx;
                v.initial_states = v.final_states = seq_idx && width > 1;
                CHECK(codegen::family_template(v) == "fwd_channel_last.cu");
                CHECK_FALSE(has_second(v));
            }
}

TEST_CASE("the packed prefill with conv-state slots has a sequence-finishing kernel, without them none") {
    Variant v;
    v.op = Op::varlen_fwd;
    v.x_dtype = v.weight_dtype = DType::bf16;
    v.initial_states = true;
    for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
        for (int width : {1, 2, 4, 16}) {
            CAPTURE(width);
            v.layout = layout;
            v.width = width;
            const auto source = codegen::render_source(v, "cuda");
            CHECK(source.second_entry == v.entry_name() + "_finish");
            CHECK(source.text.find("#define CC1D_ENTRY_FINISH " + source.second_entry) != std::string::npos);
            Variant plain = v;
            plain.initial_states = false;
            CHECK_FALSE(has_second(plain));
        }
    }
}

TEST_CASE("the channel-first forward, with and without seq_idx, has a cp.async-staged kernel") {
    Variant v;
    v.op = Op::fwd;
    v.layout = Layout::channel_first;
    for (bool seq_idx : {false, true})
        for (DType x : {DType::fp32, DType::fp16, DType::bf16})
            for (Activation act : {Activation::none, Activation::silu})
                for (int width : {1, 2, 4, 9, 16}) {
                    CAPTURE(width);
                    CAPTURE(seq_idx);
                    v.x_dtype = v.weight_dtype = x;
                    v.activation = act;
                    v.width = width;
                    v.seq_idx = seq_idx;
                    const auto source = codegen::render_source(v, "cuda");
                    CHECK(source.second_entry == v.entry_name() + "_staged");
                    CHECK(source.text.find("#define CC1D_ENTRY_STAGED " + source.second_entry) != std::string::npos);
                }
    v.x_dtype = v.weight_dtype = DType::fp32;
    v.activation = Activation::silu;
    v.seq_idx = false;
    Variant other = v;
    other.small_call = true;   // fwd_small.cu alone
    CHECK_FALSE(has_second(other));
    other = v;
    other.layout = Layout::channel_last;
    CHECK_FALSE(has_second(other));
}

TEST_CASE("modules of two large kernels split their compile: the channel-first forward") {
    auto parse = [](const std::string& text) { return Variant::parse(text); };
    for (const char* text : {"op=fwd,layout=channel_first,width=4,x=bf16,weight=bf16,act=silu,bias=1",
                             "op=fwd,layout=channel_first,width=2,x=fp32,weight=fp32",
                             "op=fwd,layout=channel_first,width=4,x=fp16,weight=fp16,seq_idx=1"}) {
        CAPTURE(text);
        CHECK(codegen::splits_compile(parse(text)));
        CHECK(codegen::render_source(parse(text), "cuda").split_compile);
    }
    // One large kernel (a reduce kernel is small), or the small-call modules. The
    // channel-last backward's walk and tile kernel are modules of their own.
    for (const char* text : {"op=fwd,layout=channel_last,width=4,x=bf16,weight=bf16",
                             "op=bwd,layout=channel_last,width=4,x=bf16,weight=bf16,act=silu,bias=1",
                             "op=bwd,layout=channel_last,width=4,x=bf16,weight=bf16,act=silu,bias=1,tiled=1",
                             "op=bwd,layout=channel_last,width=2,x=fp32,weight=fp32,tiled=1",
                             "op=fwd,layout=channel_first,width=4,x=bf16,weight=bf16,small_call=1",
                             "op=bwd,layout=channel_first,width=4,x=bf16,weight=bf16,act=silu,bias=1",
                             "op=bwd,layout=channel_last,width=5,x=bf16,weight=bf16",
                             "op=bwd,layout=channel_last,width=4,x=bf16,weight=bf16,act=silu,seq_idx=1",
                             "op=bwd,layout=channel_first,width=4,x=bf16,weight=bf16,small_call=1",
                             "op=bwd,layout=channel_last,width=4,x=bf16,weight=bf16,small_call=1",
                             "op=update,width=4,x=bf16,weight=bf16", "op=varlen_fwd,layout=channel_first,width=4,x=bf16,weight=bf16"}) {
        CAPTURE(text);
        CHECK_FALSE(codegen::splits_compile(parse(text)));
        CHECK_FALSE(codegen::render_source(parse(text), "hip").split_compile);
    }
}

TEST_CASE("every op family has an embedded template") {
    for (Op op : {Op::fwd, Op::bwd, Op::update, Op::varlen_fwd})
        for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
            Variant v;
            v.op = op;
            v.layout = layout;
            CHECK_NOTHROW(codegen::template_text(codegen::family_template(v)));
        }
}

TEST_CASE("every source joins the shared headers whole, in their order, after params.h and before its family") {
    Variant v;
    v.op = Op::bwd;
    v.width = 4;
    v.x_dtype = DType::bf16;
    v.activation = Activation::silu;
    const auto source = codegen::render_source(v, "cuda");
    std::size_t at = source.text.find(codegen::template_text("params.h"));
    REQUIRE(at != std::string::npos);
    for (const char* header : codegen::shared_headers()) {
        const std::string name = header, text = codegen::template_text(name);
        CHECK_MESSAGE(!text.empty(), name);
        const std::size_t found = source.text.find(text, at);
        CHECK_MESSAGE(found != std::string::npos, (name + " is missing or out of order"));
        if (found != std::string::npos) at = found + text.size();
    }
    CHECK(source.text.find(codegen::template_text(codegen::family_template(v)), at) != std::string::npos);
}

// The kernels lay their shared tiles out in 128-byte lines counted from the array's start,
// and cp.async copies land on those lines. An array aligned only to its 16-byte element
// starts wherever the arrays before it (static ones, or for dynamic shared memory all the
// static ones) end: one float array added before the channel-first backward's tiles put
// every 16-bit copy 16-32 bytes off its line and cost 10% (docs/perf.md, entry 140), and
// no test that checks values can see that. So every shared array of 16-byte vectors
// carries the alignment itself.
TEST_CASE("every shared array of 16-byte vectors in the templates is aligned to 128 bytes") {
    const std::regex declaration(R"(__shared__[^;]*?\bcc1d_vec16\s+\w+\s*\[[^;]*;)");
    int seen = 0;
    for (const auto& entry : codegen::embedded_templates()) {
        const std::string text = entry.text;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), declaration); it != std::sregex_iterator(); ++it) {
            const std::string found = it->str();
            CAPTURE(entry.name);
            CAPTURE(found);
            CHECK(found.find("__attribute__((aligned(128)))") != std::string::npos);
            ++seen;
        }
    }
    CHECK(seen >= 10);   // the tile buffers of every kernel family (a pattern that matches nothing fails here)
}

TEST_CASE("CC1D_TEMPLATE_DIR replaces the embedded templates") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "cc1d-template-dir-test";
    fs::create_directories(dir);
    std::ofstream(dir / "params.h") << "// replaced params\n";
    setenv("CC1D_TEMPLATE_DIR", dir.c_str(), 1);
    CHECK(codegen::template_text("params.h") == "// replaced params\n");
    try {
        codegen::template_text("vectors.h");
        FAIL("a missing template must be an error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("vectors.h") != std::string::npos);
    }
    unsetenv("CC1D_TEMPLATE_DIR");
    CHECK(codegen::template_text("params.h") != "// replaced params\n");
    fs::remove_all(dir);
}

TEST_CASE("unknown backend is refused") {
    CHECK_THROWS_AS(codegen::render_source(Variant{}, "opencl"), Error);
}
