# More plain tests: a suite has many more of these than of multiprocessing ones.
import pytest


@pytest.mark.parametrize("procs", [1, 2, 4])
def test_procs_are_positive(procs):
    assert procs > 0
