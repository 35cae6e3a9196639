// Variant -> self-contained kernel source. The text is the backend prelude, the
// variant's macros, params.h, the shared headers (shared_headers) and the op family's
// template (then the third kernel's template where a module has one, third_kernel), in
// that order; nothing is #included at compile time, so the hash of the text is the hash
// of everything the compiler sees.
#pragma once

#include <string>
#include <vector>

#include "variant/variant.hpp"

namespace cc1d::codegen {

struct RenderedSource {
    std::string text;
    std::string name;          // "<entry>.cu", for logs and compile errors
    std::string entry;         // main kernel
    std::string second_entry;  // the module's second kernel (second_kernel); empty if none
    std::string third_entry;   // the module's third kernel (third_kernel); empty if none
    // The module holds a second kernel as large as the main one (splits_compile): the
    // compiler may optimize them on separate threads.
    bool split_compile = false;
};

// The second kernel of a variant's module, as a suffix of the main entry's name, and the
// macro its template names it by: backward's fixed-order reduction ("_reduce",
// CC1D_ENTRY_REDUCE; not the small-call variants, whose module is bwd_small.cu alone),
// update's registers path ("_registers", CC1D_ENTRY_REGISTERS), the channel-first
// forward's cp.async-staged kernel
// ("_staged", CC1D_ENTRY_STAGED), the packed prefill's
// sequence-finishing kernel with conv-state slots ("_finish", CC1D_ENTRY_FINISH); empty
// for variants with one kernel.
struct ModuleKernel {
    const char* suffix;
    const char* macro;
};
ModuleKernel second_kernel(const Variant& variant);

// The third kernel of a variant's module, as second_kernel names it: the channel-first
// small-call backward's vector kernel in its two-vector form ("_vectors",
// CC1D_ENTRY_VECTORS, bwd_channel_first_vectors.cu, appended to the family's template);
// empty for the rest.
ModuleKernel third_kernel(const Variant& variant);

// Whether a variant's module holds two kernels of the main kernel's size, so that a cold
// compile spent mostly in NVRTC's optimizer gets shorter on two threads: the channel-first
// forward (main and staged kernel; on a 2-core build host 0.47 s -> 0.32-0.40 s,
// docs/perf.md entry 122).
// Not modules whose second kernel is small (the reduce kernel: split, they compiled 10-15%
// slower), nor the small-call backward ones (their code changed with the option). The
// channel-last backward's walk and tile kernel shared a split module from entry 122 until
// entry 151 gave each a module of its own (Variant::tiled).
bool splits_compile(const Variant& variant);

// backend: "cuda" or "hip".
RenderedSource render_source(const Variant& variant, const std::string& backend);

// The headers every kernel takes after params.h, one concept each, in the order the
// source joins them: each uses only what the prelude, params.h and those before it define.
const std::vector<const char*>& shared_headers();

// The template file a variant's op family uses, e.g. "fwd_channel_first.cu".
std::string family_template(const Variant& variant);

// A template by file name: from CC1D_TEMPLATE_DIR when set, else the embedded copy.
// Throws invalid_argument for an unknown name, naming the folder searched.
std::string template_text(const std::string& file_name);

}  // namespace cc1d::codegen
