// Which forward module a call's rows take: the checks every layout shares, then the
// layout's own rule (forward_channel_first.cpp, forward_channel_last.cpp).
#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"

namespace cc1d::launch {

bool forward_takes_shifted_rows(const Variant& variant, const ForwardArgs& args) {
    if (!util::shifted_rows_allowed(variant, args.x)) return false;
    return variant.layout == Layout::channel_last ? !forward_channel_last_vector_rows(args)
                                                  : forward_channel_first_shifted_rows(args);
}

}  // namespace cc1d::launch
