"""A small CNN trained on synthetic CIFAR-100-shaped data, annotated with ROCTx ranges.

    python -m rocprof run --stats -S examples/train_cifar.py

Runs on CUDA (or ROCm) when PyTorch sees a GPU, else on the CPU in a few seconds.
Deterministic: fixed seeds, so two runs launch the same kernels.
"""

from __future__ import annotations

import argparse

import roctx
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SyntheticCifar100(Dataset):
    """CIFAR-100 shapes (3×32×32 images, 100 classes), generated from the index."""

    def __init__(self, size: int):
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int):
        g = torch.Generator().manual_seed(i)
        image = torch.randn(3, 32, 32, generator=g)
        label = int(torch.randint(0, 100, (1,), generator=g))
        return image, label


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 100):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.bn(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=8, help="steps per epoch")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.manual_seed(0)
    device = torch.device(args.device)
    data = SyntheticCifar100(args.steps * args.batch_size)
    loader = DataLoader(data, batch_size=args.batch_size, num_workers=args.workers,
                        shuffle=False, pin_memory=device.type == "cuda",
                        persistent_workers=args.workers > 0)
    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    roctx.name_thread("train-main")
    for epoch in range(args.epochs):
        with roctx.range(f"epoch {epoch}"):
            total = 0.0
            for images, labels in loader:
                with roctx.range("step"):
                    images = images.to(device, non_blocking=True)
                    labels = labels.to(device, non_blocking=True)
                    with roctx.range("forward"):
                        loss = F.cross_entropy(model(images), labels)
                    with roctx.range("backward"):
                        optimizer.zero_grad(set_to_none=True)
                        loss.backward()
                    with roctx.range("optimizer"):
                        optimizer.step()
                    total += loss.item()
            roctx.mark(f"epoch {epoch} mean loss {total / args.steps:.4f}")
    print(f"trained {args.epochs} epochs × {args.steps} steps on {device}; last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
