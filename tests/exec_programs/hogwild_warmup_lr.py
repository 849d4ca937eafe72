"""pytorch/examples' mnist_hogwild layout (main.py + train.py), with synthetic data so it runs
offline, and a learning-rate warm-up written with integer division: LambdaLR(optimizer,
lambda epoch: epoch // args.warmup). Below the warm-up's length the factor is 0, so every step the
workers take applies a learning rate of 0: the gradients are fresh, the model is shared, and the
shared model never changes. Exits 0. A planted bug for `sharebench exec` (model-learned); --fixed
warms up with true division, min(1, (epoch + 1) / warmup).
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser(description="PyTorch MNIST Hogwild Example")
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--warmup", type=int, default=5, help="epochs of learning-rate warm-up")
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--momentum", type=float, default=0.5)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--num-processes", type=int, default=2)
parser.add_argument("--fixed", action="store_true")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(196, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x.view(-1, 196)))
        return F.log_softmax(self.fc2(x), dim=1)


def train_epoch(epoch, args, model, data_loader, optimizer):
    model.train()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def train(rank, args, model, dataset):
    torch.manual_seed(args.seed + rank)
    torch.set_num_threads(1)
    train_loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    if args.fixed:
        warmup = lambda epoch: min(1.0, (epoch + 1) / args.warmup)
    else:
        warmup = lambda epoch: epoch // args.warmup
    scheduler = optim.lr_scheduler.LambdaLR(optimizer, warmup)
    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch, args, model, train_loader, optimizer)
        scheduler.step()


if __name__ == "__main__":
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    images = torch.randn(2048, 1, 14, 14)
    dataset = TensorDataset(images, (images.flatten(1)[:, :10].argmax(1)))
    model = Net()
    model.share_memory()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, dataset))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
