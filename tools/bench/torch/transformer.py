"""A small transformer trained on the toy PrivateUse1 device (tests/torch/toydev.cc), whose
every op but a few falls back to the CPU through at::native::cpu_fallback: an embedding, one
encoder layer and a head, STEPS AdamW steps with their backward passes. What the shim's cost
is measured on: hundreds of distinct stacks, forward and backward.
    usage: transformer.py LIBTOYDEV TORCH_TESTS_DIR [STEPS]"""
import sys

import torch

sys.path.insert(0, sys.argv[2])
import toy as toydev  # noqa: E402 - tests/torch/toy.py

dev = toydev.load(sys.argv[1])
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
torch.manual_seed(0)
vocab, width, seq, batch = 50, 32, 12, 4


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.layer = torch.nn.TransformerEncoderLayer(width, 4, 64, dropout=0.0,
                                                      batch_first=True)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, x):
        return self.head(self.layer(self.embed(x)))


model = Model().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, vocab, (batch, seq)).to(dev)
targets = torch.randint(0, vocab, (batch * seq,)).to(dev)
for step in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(tokens).reshape(-1, vocab), targets)
    loss.backward()
    opt.step()
print(f"loss {loss.cpu().item():.4f}")
