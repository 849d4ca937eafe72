# The same planted bug in a unittest suite, as PyTorch's own tests are written: a TestCase whose
# workers train a model that was never moved to shared memory. `sharebench exec -- python3 -m
# unittest` must name that test by its unittest id, and no other (tests/exec_pytest_test.sh).
import unittest

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def train(rank, model):
    torch.manual_seed(200 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(50):
        x = torch.randn(16, 4)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run_workers(model):
    workers = [mp.Process(target=train, args=(rank, model)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return [w.exitcode for w in workers]


class TrainerTest(unittest.TestCase):
    def test_shared_model(self):
        model = nn.Linear(4, 1)
        model.share_memory()
        self.assertEqual(run_workers(model), [0, 0])

    def test_private_model(self):
        self.assertEqual(run_workers(nn.Linear(4, 1)), [0, 0])  # the bug: never share_memory()

    def test_arithmetic(self):
        self.assertEqual(torch.ones(2).sum().item(), 2)


if __name__ == "__main__":
    unittest.main()
