"""A stand-in for the expecttest package, which Debian 12 does not ship: the two names PyTorch's
torch.testing._internal.common_utils takes from it (ACCEPT and TestCase), so PyTorch's own test
files run under Debian's python3-torch. Only tests/pytorch_own_tests.sh puts it on PYTHONPATH."""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertEqual(str(actual).strip(), str(expect).strip())
