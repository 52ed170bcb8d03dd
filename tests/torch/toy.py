"""Loads the toy PrivateUse1 device (toydev.cc) into PyTorch and returns its torch.device.

PyTorch 2.x looks a PrivateUse1 backend's Python module up (torch.privateuseone) before it
moves a tensor there; the toy device's is the little a host-memory device with one device
needs. 1.13 looks nothing up."""
import types

import torch


def load(library):
    torch.ops.load_library(library)
    if hasattr(torch, "_register_device_module") and not hasattr(torch, "privateuseone"):
        module = types.ModuleType("privateuseone")
        module.is_available = lambda: True
        module.device_count = lambda: 1
        module.current_device = lambda: 0
        module.is_initialized = lambda: True
        module._is_in_bad_fork = lambda: False
        module.manual_seed_all = lambda seed: None
        torch._register_device_module("privateuseone", module)
    return torch.device("privateuseone")
