"""train_mnist.py - torch DDP (gloo, CPU) on a synthetic MNIST-like data set, for kt's cluster tests.

Started by torchrun (or anything that sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT): prints
`world size N rank R ...` once, then `rank R/N epoch E step S loss L` per step, then
`rank R/N done final loss L first loss L`. Nothing is downloaded: the data (28x28 "digits" made
of class-specific prototypes plus noise) comes from a fixed seed. EPOCHS (default 3) and
STEPS_PER_EPOCH (default 5) size the run; it takes a few seconds on one CPU per rank.
"""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def say(msg):
    """Print one line in one write, so lines of concurrent ranks on one stdout do not mix."""
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def synthetic_mnist(n, seed=1234):
    """n 1x28x28 images in 10 classes: a fixed random prototype per class plus noise."""
    g = torch.Generator().manual_seed(seed)
    prototypes = torch.rand(10, 1, 28, 28, generator=g)
    labels = torch.randint(0, 10, (n,), generator=g)
    images = prototypes[labels] + 0.5 * torch.randn(n, 1, 28, 28, generator=g)
    return TensorDataset(images, labels)


class Net(nn.Module):
    """A tiny CNN: one conv layer, one hidden linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, stride=2)
        self.fc1 = nn.Linear(8 * 13 * 13, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def main():
    epochs = int(os.environ.get("EPOCHS", "3"))
    steps_per_epoch = int(os.environ.get("STEPS_PER_EPOCH", "5"))
    batch = 32
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    say(f"world size {world} rank {rank} local_rank {os.environ.get('LOCAL_RANK', '?')} "
        f"master {os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')} "
        f"host {os.uname().nodename} torch {torch.__version__}")
    torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts rank 0's)
    data = synthetic_mnist(batch * steps_per_epoch * world)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=batch, sampler=sampler)
    model = DistributedDataParallel(Net())
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    first = last = None
    t0 = time.time()
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader, 1):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            # The mean over ranks, so every rank prints the same, comparable number.
            avg = loss.detach().clone()
            dist.all_reduce(avg)
            avg = avg.item() / world
            first = avg if first is None else first
            last = avg
            say(f"rank {rank}/{world} epoch {epoch} step {step} loss {avg:.4f}")
    say(f"rank {rank}/{world} done final loss {last:.4f} first loss {first:.4f} "
        f"in {time.time() - t0:.1f} s")
    dist.barrier()
    return 0 if last < first else 1


if __name__ == "__main__":
    # os._exit: skip gloo's teardown at interpreter exit, which once hung rank 0 after `done`
    # (seen once in 6 runs on this VM, futex wait; the other rank had exited).
    code = main()
    sys.stdout.flush()
    os._exit(code)
