"""Sample files whose every mapped page is backed by the disk before it is written.

prometheus-client's multiprocess mode keeps each process's samples in a memory-mapped file
that it creates, and later doubles, with `truncate`: a sparse file. Writing to a page the file
system has no block for (a full disk) ends the process with SIGBUS, which nothing can catch, so
a full disk killed `slowave up` on its next call. `BackedSampleFile` reserves the blocks with
`posix_fallocate` before the library maps or grows the file: a full disk then raises OSError
(ENOSPC) where the caller can drop the sample (slowave_site.metrics) and carry on.

Not here: the metrics themselves and what a failed sample costs (slowave_site.metrics).
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import values
from prometheus_client.mmap_dict import MmapedDict

# What one entry takes beyond its key: a 4-byte length, up to 8 bytes of padding, and two
# 8-byte doubles (the file layout MmapedDict documents).
_ENTRY_OVERHEAD = 4 + 8 + 16
# The size MmapedDict gives a new file (prometheus_client.mmap_dict._INITIAL_MMAP_SIZE).
_FIRST_SIZE = 1 << 16


class BackedSampleFile(MmapedDict):  # type: ignore[misc]
    """MmapedDict with disk blocks reserved for every page it maps."""

    def __init__(self, filename: str, read_mode: bool = False) -> None:
        if not read_mode:
            with open(filename, "a+b") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    os.posix_fallocate(f.fileno(), 0, _FIRST_SIZE)
        super().__init__(filename, read_mode)

    def _init_value(self, key: str) -> Any:
        needed = self._used + len(key.encode("utf-8")) + _ENTRY_OVERHEAD
        capacity = self._capacity
        while needed > capacity:
            capacity *= 2
        if capacity > self._capacity:
            # Reserved first: the library's own truncate to this size then only maps blocks.
            os.posix_fallocate(self._f.fileno(), 0, capacity)
        return super()._init_value(key)


def back_sample_files() -> None:
    """Make prometheus-client create its multiprocess sample files as BackedSampleFile.

    Before the first metric is made in the process (slowave_site.metrics.install_metrics):
    the library looks the class up by name in prometheus_client.values each time it opens a
    file.
    """
    values.MmapedDict = BackedSampleFile  # type: ignore[misc]
