// oddthrow.cc - liboddthrow.so: a C function whose calls end in a C++ exception (odd.h).
#include <stdexcept>
#include <string>

#include "odd.h"

extern "C" void odd_throw(int n)
{
    throw std::runtime_error("odd_throw " + std::to_string(n));
}
