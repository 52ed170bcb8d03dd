// toydev.h - the toy PrivateUse1 device of toydev.cc.
#ifndef TOYDEV_H
#define TOYDEV_H

#include <c10/core/Device.h>

// The device (PrivateUse1, index 0); a program that names it links the library, which
// registers its kernels and its CPU fallback when loaded.
c10::Device toy_device();

#endif
