"""BROKEN twin of shm_handoff.py: the producer unregisters its segment from multiprocessing's
resource tracker. Killed before it unlinks (`--fault kill:child@1`), it leaves the segment in
/dev/shm for good; sharebench exec reports it (shm-reclaimed) with the process that used it, and
removes it.
"""
import shm_handoff

if __name__ == "__main__":
    shm_handoff.main(untracked=True)
