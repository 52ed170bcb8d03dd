// throwing.cc - a C++ backend whose fallback exit throws: every third host_result call raises
// std::runtime_error, which the program catches above the backend's op. Under the shim the
// exception must reach the program's handler unchanged, every call must be counted (thrown
// ones too), and the program's output must be what it is without the shim.
//   usage: cpp-throwing N    prints "calls N caught K" and exits 0
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

extern "C" int vkt_gather(size_t nbytes);
extern int received;

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 8, caught = 0;
    for (int i = 0; i < n; i++) {
        try {
            vkt_gather(64);
        } catch (const std::runtime_error &e) {
            caught += std::string_view(e.what()) == "host reference failed";
        }
    }
    std::printf("calls %d caught %d\n", received, caught);
    return 0;
}
