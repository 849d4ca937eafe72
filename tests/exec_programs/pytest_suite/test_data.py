# Plain tests beside the multiprocessing ones: none of them may be named by a finding.
import torch
import torch.multiprocessing as mp


def square(x):
    return x * x


def test_batch_is_float():
    assert torch.randn(4, 8).dtype == torch.float32


def test_pool_maps():
    with mp.get_context("spawn").Pool(2) as pool:
        assert pool.map(square, [1, 2, 3]) == [1, 4, 9]


def test_queue_hands_a_tensor_over():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    queue.put(torch.ones(3))
    assert torch.equal(queue.get(), torch.ones(3))


def test_sum():
    assert torch.arange(4).sum().item() == 6
