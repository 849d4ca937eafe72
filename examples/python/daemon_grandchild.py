"""BROKEN: starts a daemonised grandchild (double fork and setsid, as a background helper or a
server launched "in the background" would) and exits without stopping it. sharebench exec
reports it as a survivor (no-survivors) and kills it. No torch needed.
"""
import os
import sys
import time

if __name__ == "__main__":
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(300)  # the daemon: outlives the program
            os._exit(0)
        os._exit(0)
    os.wait()
    print("started a daemon and left", flush=True)
    sys.exit(0)
