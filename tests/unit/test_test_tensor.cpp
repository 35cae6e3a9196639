// The GPU tests' TestTensor, host side only (no device needed): memory orders and
// padding give the strides the tests rely on, values round-trip in logical order, and
// padding_untouched() notices a write outside the view.
#include <doctest/doctest.h>

#include "common/host_dtype.hpp"
#include "support/random_tensor.hpp"

using namespace cc1d;
using cc1d::test::TestTensor;
using cc1d::test::ViewOptions;

namespace {

std::vector<std::int64_t> strides(const Tensor& t) { return {t.strides, t.strides + t.rank}; }

ViewOptions padded(bool channel_last) {
    ViewOptions v;
    v.channel_last = channel_last;
    v.pad[0] = 1, v.pad[1] = 2, v.pad[2] = 3;
    return v;
}

}  // namespace

TEST_CASE("TestTensor: strides of each memory order") {
    CHECK(strides(TestTensor(DType::fp32, {2, 3, 4}, {}, false).host_view()) == std::vector<std::int64_t>{12, 4, 1});
    ViewOptions cl;
    cl.channel_last = true;
    CHECK(strides(TestTensor(DType::fp32, {2, 3, 4}, cl, false).host_view()) == std::vector<std::int64_t>{12, 1, 3});
    // Padded: L spans 4+3 = 7, D spans 3+2 = 5 -> (35, 7, 1); channel-last: (35, 1, 5).
    CHECK(strides(TestTensor(DType::fp32, {2, 3, 4}, padded(false), false).host_view()) == std::vector<std::int64_t>{35, 7, 1});
    CHECK(strides(TestTensor(DType::fp32, {2, 3, 4}, padded(true), false).host_view()) == std::vector<std::int64_t>{35, 1, 5});
    // Rank 2, channel_last: the transposed (token-major) layout.
    CHECK(strides(TestTensor(DType::bf16, {3, 10}, cl, false).host_view()) == std::vector<std::int64_t>{1, 3});
}

TEST_CASE("TestTensor: guard bytes and misalignment") {
    ViewOptions v;
    v.misalign = 3;
    for (DType dtype : {DType::fp32, DType::fp16}) {
        TestTensor t(dtype, {5}, v, false);
        const auto* start = static_cast<const unsigned char*>(t.host_view().data);
        // 64 guard bytes, then 3 elements.
        CHECK(start - t.host_bytes().data() == static_cast<std::ptrdiff_t>(64 + 3 * dtype_size(dtype)));
        CHECK(t.all_poisoned());
    }
}

TEST_CASE("TestTensor: values in logical order, rounded to the dtype") {
    TestTensor t(DType::fp32, {2, 2, 3}, padded(true), false);
    std::vector<double> want(12);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<double>(i) - 5.5;
    t.fill_values(want);
    CHECK(t.values() == want);
    CHECK(host::at(t.host_view(), 1, 0, 2) == want[1 * 6 + 0 * 3 + 2]);
    CHECK_FALSE(t.all_poisoned());
    CHECK(t.padding_untouched());

    TestTensor b(DType::bf16, {1}, {}, false);
    b.fill_values({0.1});
    CHECK(b.values()[0] == 0.10009765625);
}

TEST_CASE("TestTensor: a write next to the view is noticed") {
    TestTensor t(DType::fp16, {2, 3, 4}, padded(false), false);
    std::mt19937 rng(1);
    t.fill_random(rng);
    CHECK(t.padding_untouched());
    for (double v : t.values()) CHECK((v >= -1.0 && v < 1.0));
    // The element just past the first row (in the row padding) and the one before the view.
    auto* base = const_cast<void*>(t.host_view().data);
    host::store(base, DType::fp16, 4, 0.0);
    CHECK_FALSE(t.padding_untouched());
    TestTensor u(DType::fp32, {3}, {}, false);
    u.fill_values({1, 2, 3});
    host::store(const_cast<void*>(u.host_view().data), DType::fp32, -1, 0.0);
    CHECK_FALSE(u.padding_untouched());
}
