// The kernel templates, embedded at build time (generated embedded_templates.cpp).
#pragma once

#include <cstddef>

namespace cc1d::codegen {

struct EmbeddedTemplate {
    const char* name;
    const char* text;
};

struct EmbeddedTemplateList {
    const EmbeddedTemplate* first;
    std::size_t count;
    const EmbeddedTemplate* begin() const { return first; }
    const EmbeddedTemplate* end() const { return first + count; }
};

EmbeddedTemplateList embedded_templates();

}  // namespace cc1d::codegen
