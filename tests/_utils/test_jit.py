"""The numba compile timer behind the job records' ``compile_seconds`` and the run's log line."""

from __future__ import annotations

import time

from numba import njit

from safeclf._utils import jit


def test_compile_seconds_counts_each_compilation_once():
    jit.compile_seconds()  # numba is imported: the timer listens from here

    @njit  # not cached: compiled in this process, whatever the cache holds
    def inner(x):
        return x * 2.0

    @njit
    def outer(x):
        return inner(x) + 1.0

    before = jit.compile_seconds()
    t0 = time.perf_counter()
    assert outer(1.0) == 3.0
    wall = time.perf_counter() - t0
    spent = jit.compile_seconds() - before
    # inner compiles inside outer's compilation: counted once, so within the call's wall time
    assert 0.0 < spent <= wall
    again = jit.compile_seconds()
    assert outer(2.0) == 5.0  # compiled already: nothing more
    assert jit.compile_seconds() == again


def test_the_compiled_modules_are_every_module_that_compiles():
    """The cache folder's fingerprint covers each module with numba code (``@njit`` or an
    intrinsic): one left out could change while the cache kept its callers' old code."""
    import re
    from pathlib import Path

    import safeclf

    root = Path(safeclf.__file__).parent
    compiling = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
                 if re.search(r"^\s*@(njit|intrinsic)\b", p.read_text(), re.M)}
    assert compiling == set(safeclf.COMPILED_MODULES)


def test_a_changed_compiled_module_gives_a_new_cache_folder(tmp_path):
    """Copies of the compiled modules: the fingerprint is stable, and changes when one
    module's size or modification time does (numba's own check looks at one file only)."""
    import os
    import shutil
    from pathlib import Path

    import safeclf

    root = Path(safeclf.__file__).parent
    for name in safeclf.COMPILED_MODULES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, tmp_path / name)
    first = safeclf._compiled_fingerprint(str(tmp_path))
    assert first == safeclf._compiled_fingerprint(str(tmp_path))
    seen = {first}
    for name in safeclf.COMPILED_MODULES[:3]:
        st = os.stat(tmp_path / name)
        os.utime(tmp_path / name, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        seen.add(safeclf._compiled_fingerprint(str(tmp_path)))
    with open(tmp_path / safeclf.COMPILED_MODULES[-1], "a") as f:
        f.write("\n")
    seen.add(safeclf._compiled_fingerprint(str(tmp_path)))
    assert len(seen) == 5
