"""The peak resident memory of this process's own program, for benchmarks that start a fresh
process per measurement."""

from __future__ import annotations


def peak_mib() -> float:
    """``VmHWM`` of /proc/self/status in MiB: the high-water mark of the memory this program
    mapped since its ``exec``. ``getrusage``'s ``ru_maxrss`` is not that on Linux: it is kept
    across fork and exec, so a child started by a parent of 450 MiB reads at least 450 MiB
    whatever it used itself. Where /proc is missing, ``ru_maxrss`` (with that caveat)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
