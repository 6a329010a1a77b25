"""The kernel's flags of this process's memory mappings (Linux's /proc/self/smaps), for tests of
how arrays are advised: ``hg`` advised for huge pages, ``nh`` advised against them."""

from __future__ import annotations


def vm_flags(address: int) -> list[str] | None:
    """The VmFlags of the mapping of this process that holds ``address`` (None: no smaps)."""
    try:
        text = open("/proc/self/smaps").read()
    except OSError:
        return None
    inside = False
    for line in text.splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and head == "VmFlags:":
            return line.split()[1:]
    raise AssertionError("no mapping holds the address")


def middle_flags(array) -> list[str] | None:
    """:func:`vm_flags` of the middle of ``array``'s memory (numpy advises a large array's
    2 MiB-aligned middle, which the kernel keeps as a mapping of its own)."""
    return vm_flags(array.ctypes.data + array.nbytes // 2)


def kept_off_huge_pages(array) -> bool | None:
    """Whether the mappings under ``array``'s first byte, middle and last byte are all advised
    against huge pages (``nh``) and none for them (``hg``); None where this cannot be read
    (no smaps) or the platform has no such advice."""
    import mmap

    if not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return None
    base = array.ctypes.data
    flags = [vm_flags(base + at) for at in (0, array.nbytes // 2, array.nbytes - 1)]
    if any(f is None for f in flags):
        return None
    return all("nh" in f and "hg" not in f for f in flags)
