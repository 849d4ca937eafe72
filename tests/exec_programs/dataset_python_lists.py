"""A Dataset that keeps its samples as Python lists, read by two DataLoader workers forked from the
process that built it: the issue users know as pytorch#13246. Every read writes each list's
reference count, so each worker copies, page by page, the part of the parent's heap it reads, and
memory grows with the workers although nothing was written on purpose. Exits 0. A planted bug for
`sharebench exec` (copy-on-read); --arrays keeps the same samples in one numpy array, which stays
shared.
"""
import argparse

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--samples", type=int, default=1_500_000)
parser.add_argument("--arrays", action="store_true")


class IndexDataset(Dataset):
    def __init__(self, samples, arrays):
        if arrays:
            self.rows = np.arange(samples * 4, dtype=np.int64).reshape(samples, 4)
        else:
            self.rows = [[i, i + 1, i + 2, i + 3] for i in range(samples)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return torch.as_tensor(self.rows[index])


if __name__ == "__main__":
    args = parser.parse_args()
    dataset = IndexDataset(args.samples, args.arrays)
    loader = DataLoader(dataset, batch_size=4096, shuffle=False, num_workers=2)
    seen = 0
    for batch in loader:
        seen += batch.shape[0]
    assert seen == len(dataset)
    print("read %d samples" % seen)
