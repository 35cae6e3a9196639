// The product of a config entry's lists: each field contributes an axis of choices,
// and expand() yields one item per combination. The first axis varies slowest, so the
// expanded items come out grouped the way the config lists its fields.
#pragma once

#include <functional>
#include <vector>

namespace cc1d::config {

template <typename Item>
class Expansion {
public:
    using Setter = std::function<void(Item&)>;

    // `apply(item, choice)` writes one choice into an item. Axes are applied in the
    // order they were added, so a later axis may read what an earlier one wrote
    // (weight_dtype "same" reads x_dtype).
    template <typename Choice, typename Apply>
    void add_axis(const std::vector<Choice>& choices, Apply apply) {
        std::vector<Setter> axis;
        for (const Choice& choice : choices) axis.push_back([choice, apply](Item& item) { apply(item, choice); });
        axes_.push_back(std::move(axis));
    }

    std::vector<Item> expand(const Item& base) const {
        std::vector<Item> items;
        std::vector<std::size_t> index(axes_.size(), 0);
        for (const auto& axis : axes_)
            if (axis.empty()) return items;
        while (true) {
            Item item = base;
            for (std::size_t a = 0; a < axes_.size(); ++a) axes_[a][index[a]](item);
            items.push_back(std::move(item));
            // Odometer: the last axis turns fastest.
            std::size_t a = axes_.size();
            while (a > 0) {
                --a;
                if (++index[a] < axes_[a].size()) break;
                index[a] = 0;
                if (a == 0) return items;
            }
            if (axes_.empty()) return items;
        }
    }

private:
    std::vector<std::vector<Setter>> axes_;
};

}  // namespace cc1d::config
