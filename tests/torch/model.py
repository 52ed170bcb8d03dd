"""A Python model on the toy device (toydev.cc), as a user of an accelerator backend writes it:
ops the device runs natively, ops that fall back to the CPU a known number of times each, a
CPU kernel that raises through the fallback (index_select out of range), caught, and more
fallbacks after it.   usage: model.py LIBTOYDEV [steps]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toy as toydev  # noqa: E402 - beside this file

toy = toydev.load(sys.argv[1])
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
x = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(toy)
y = torch.ones(3, 4).to(toy)


def layer(z):
    g = torch.nn.functional.gelu(z)  # MODEL-GELU
    return g * y  # MODEL-MUL


for _ in range(steps):
    m = layer(x + y)
rows = torch.index_select(x, 0, torch.tensor([0, 2]).to(toy))  # MODEL-SELECT
try:
    torch.index_select(x, 0, torch.tensor([7]).to(toy))  # MODEL-THROW
    caught = 0
except IndexError:
    caught = 1
for _ in range(2):
    r = torch.relu(m)  # MODEL-RELU
print(f"caught {caught} sum {r.cpu().sum().item():.4f} rows {rows.cpu().sum().item():.1f}")
