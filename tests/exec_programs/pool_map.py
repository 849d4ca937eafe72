"""A correct program that uses multiprocessing's Pool as its documentation does: `with Pool(...)`
maps a function over inputs, and leaving the block terminates the workers (SIGTERM). Those are the
program's own signals, not deaths: deaths-noticed must pass.
"""
import torch
import torch.multiprocessing as mp


def norm(seed):
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    return float(torch.randn(256, 256).norm())


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        norms = pool.map(norm, range(16))
    assert len(norms) == 16
    print("mean norm %.2f" % (sum(norms) / len(norms)))
