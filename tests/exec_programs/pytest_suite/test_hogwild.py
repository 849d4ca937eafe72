# A user's pytest suite for a Hogwild trainer, as such suites are written: each test starts its own
# workers with torch.multiprocessing. One test has a planted sharing bug: it forgets share_memory(),
# so under fork each worker trains a private copy of the model and the test's own assertion (it
# only checks that the workers exited 0) passes. `sharebench exec -- python3 -m pytest` must name
# that test, and no other (tests/exec_pytest_test.sh).
import torch
import torch.multiprocessing as mp
import torch.nn as nn


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def train(rank, model, steps):
    torch.manual_seed(100 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        x = torch.randn(16, 8)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run_workers(model, procs=2, steps=50):
    workers = [mp.Process(target=train, args=(rank, model, steps)) for rank in range(procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return [w.exitcode for w in workers]


def test_workers_train_the_shared_model():
    model = make_model()
    model.share_memory()
    before = [p.detach().clone() for p in model.parameters()]
    assert run_workers(model) == [0, 0]
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_workers_exit_cleanly():
    model = make_model()  # the bug: no model.share_memory() before the workers start
    assert run_workers(model) == [0, 0]


def test_model_shape():
    assert make_model()(torch.zeros(3, 8)).shape == (3, 1)
