"""A training step on the toy device (toydev.cc) whose backward falls back: PyTorch runs a
device's backward on autograd's own thread, where no frame is the user's; its fallbacks are
sited at the line that called backward(), and torch.autograd.grad's at its own line, each
naming the node autograd ran (EluBackward0) and, in anomaly mode, the forward line that made it.
usage: backward.py LIBTOYDEV [steps [anomaly]]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toy as toydev  # noqa: E402 - beside this file

toy = toydev.load(sys.argv[1])
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
# Anomaly mode keeps each node's forward traceback (its NaN checks, which would fall back
# too, off).
torch.autograd.set_detect_anomaly(sys.argv[3:] == ["anomaly"], check_nan=False)
x = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(toy)
w = torch.ones(3, 4).to(toy).requires_grad_()
for _ in range(steps):
    h = x * w  # BACKWARD-MUL
    loss = torch.nn.functional.elu(h).sum()  # BACKWARD-FORWARD
    loss.backward()  # BACKWARD-CALL
(g,) = torch.autograd.grad(torch.nn.functional.elu(x * w).sum(), [w])  # BACKWARD-GRAD
print(f"grad {w.grad.cpu().sum().item():.4f} {g.cpu().sum().item():.4f}")
