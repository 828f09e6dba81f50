"""Training steps of a small transformer language model (the launch-bound kind: many small
kernels per step at this size), each step a ROCTx range "train_step", for the guided analysis.

  --steps N  --batch B  --seq S  --layers L  --width D
Prints one JSON line: {"ms_per_step": ...}.
"""

import argparse
import json
import time

import roctx
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab, width, layers, heads=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf"), device=tokens.device), diagonal=1)
        return self.head(self.body(self.emb(tokens), mask=mask, is_causal=True))


def train_step(model, opt, tokens):
    with roctx.range("forward"):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    with roctx.range("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with roctx.range("optimizer"):
        opt.step()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=256)
    a = p.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    vocab = 1000
    model = TinyLM(vocab, a.width, a.layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, vocab, (a.batch, a.seq + 1), device=dev)
    for _ in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            train_step(model, opt, tokens)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        with roctx.range("train_step"), torch.autocast("cuda", dtype=torch.bfloat16):
            loss = train_step(model, opt, tokens)
    torch.cuda.synchronize()
    print(json.dumps({"ms_per_step": 1000 * (time.perf_counter() - t0) / a.steps,
                      "loss": float(loss.detach())}))


if __name__ == "__main__":
    main()
