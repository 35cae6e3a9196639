// A user's program: links libcc1d through its CMake package and uses the public API.
#include <cc1d/cc1d.hpp>

#include <cstdio>

int main() {
    cc1d::Runtime runtime(cc1d::RuntimeOptions{"", false, "error"});
    std::printf("cc1d %s, compiles so far: %llu\n", cc1d::version().c_str(),
                static_cast<unsigned long long>(runtime.stats().compiles));
    return 0;
}
