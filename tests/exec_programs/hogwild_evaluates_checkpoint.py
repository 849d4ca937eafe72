"""A Hogwild trainer in the layout of PyTorch's mnist_hogwild example, grown the way such scripts grow:
rank 0 saves a checkpoint every --save-every epochs, and the main process, once the workers are
joined, evaluates "the checkpoint" with the script's own --evaluate code path (a new Net loaded from
the file). Planted bug: with the default --save-every 10 and 4 epochs, rank 0 saves only after epoch 0,
the first of four, so the test scores a model that missed most of the training while the trained one sits
in the shared memory the parent still holds. `--no-save`: nothing saves at all and the evaluation
runs a freshly initialised Net. `--fixed`: the main process saves the shared model after join(), then
evaluates that file (the same values); `--evaluate-shared` tests the shared model itself, as the
example does.
"""
import argparse
import os
import tempfile

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

parser = argparse.ArgumentParser()
parser.add_argument("--num-processes", type=int, default=2)
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--save-every", type=int, default=10)
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--checkpoint", default=None)
parser.add_argument("--no-save", action="store_true")
parser.add_argument("--fixed", action="store_true")
parser.add_argument("--evaluate-shared", action="store_true")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 20, generator=g)
    y = (x[:, :4].argmax(dim=1))
    return x, y


def train(rank, args, model):
    torch.manual_seed(args.seed + rank)
    torch.set_num_threads(1)
    x, y = make_data(2048, args.seed + rank)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    for epoch in range(args.epochs):
        model.train()
        for i in range(0, len(x), 32):
            optimizer.zero_grad()
            loss = F.nll_loss(model(x[i:i + 32]), y[i:i + 32])
            loss.backward()
            optimizer.step()
        if rank == 0 and not args.no_save and not args.fixed and epoch % args.save_every == 0:
            torch.save(model.state_dict(), args.checkpoint)


def test(model, x, y):
    model.eval()
    with torch.no_grad():
        output = model(x)
        loss = F.nll_loss(output, y).item()
        accuracy = (output.argmax(dim=1) == y).float().mean().item()
    print(f"Test set: average loss {loss:.4f}, accuracy {accuracy:.3f}")
    return accuracy


def evaluate(args, x, y):
    """The script's --evaluate mode: score a saved checkpoint."""
    model = Net()
    if os.path.exists(args.checkpoint):
        model.load_state_dict(torch.load(args.checkpoint))
    return test(model, x, y)


if __name__ == "__main__":
    args = parser.parse_args()
    workdir = tempfile.mkdtemp()
    args.checkpoint = args.checkpoint or os.path.join(workdir, "checkpoint.pt")
    torch.manual_seed(args.seed)
    model = Net()
    model.share_memory()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    x, y = make_data(1024, 1000)
    if args.evaluate_shared:
        test(model, x, y)
    else:
        if args.fixed:
            torch.save(model.state_dict(), args.checkpoint)
        evaluate(args, x, y)
