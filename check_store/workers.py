"""Nothing outlives the run: worker processes and scratch folders that end with it, however it ends.

dask's ``processes`` scheduler makes a pool of its own and leaves it to the interpreter's
exit: killed by SIGTERM, check-store left its workers (and multiprocessing's resource
tracker) running with no parent. :func:`process_pool` is a pool this run owns: its workers
leave Ctrl-C to the run (which then ends them, as it does on SIGTERM), are ended when the run
ends, and on Linux are sent SIGTERM by the kernel if the run itself dies without a word
(``PR_SET_PDEATHSIG``). :func:`scratch_folder` is a temporary folder removed at the end.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import multiprocessing.pool
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator

__all__ = ["process_pool", "scratch_folder"]

#: prctl(2)'s option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """A worker's start: Ctrl-C is the run's to handle; the parent's death ends this worker too."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[multiprocessing.pool.Pool]:
    """A pool of ``workers`` processes, closed when the block ends, and terminated when it ends by an exception
    (Ctrl-C, SIGTERM taken as one, a failure)."""
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_die_with, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()
    pool.join()


@contextlib.contextmanager
def scratch_folder() -> Iterator[str]:
    """A temporary folder of this run's, removed with whatever was written in it when the block ends."""
    folder = tempfile.mkdtemp(prefix="check-store-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
