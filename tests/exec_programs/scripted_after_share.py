"""A server that shares its model with its workers and then compiles it for itself with TorchScript
(torch.jit.script) and torch.fx, in that order, as serving code does. Correct: each worker answers
with the shared model's forward(), the parent with the compiled copies, and every answer agrees.
exec's hooks watch the shared model's calls; they must leave its forward() as the program wrote it,
which TorchScript compiles from its source and torch.fx traces by its signature.
"""
import torch
import torch.fx
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(16, 32)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def answer(model, requests, results, rank):
    torch.set_num_threads(1)
    with torch.no_grad():
        results.put((rank, model(requests).tolist()))  # a list: the answer outlives this worker


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Scorer()
    model.share_memory()
    requests = torch.randn(8, 16)
    results = mp.Queue()
    workers = [mp.Process(target=answer, args=(model, requests, results, rank)) for rank in range(2)]
    for w in workers:
        w.start()
    scripted = torch.jit.script(model)
    traced = torch.fx.symbolic_trace(model)
    answers = [torch.tensor(results.get(timeout=120)[1]) for _ in workers]
    for w in workers:
        w.join()
    with torch.no_grad():
        expected = model(requests)
        for got in answers + [scripted(requests), traced(requests)]:
            assert torch.allclose(got, expected), "an answer differs from the shared model's"
    print("4 answers agree")
    raise SystemExit(0 if all(w.exitcode == 0 for w in workers) else 1)
