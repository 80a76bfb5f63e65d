"""A result file swapped for a FIFO between the walk and the read must not block (issue #11).

The walk takes a folder entry's type for the file's; by the time the file is opened it may be
a FIFO, which a blocking ``open`` would wait on forever. Each case runs in a child process
with a timeout, so that a hang is a failure and not a stuck suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import Tree, mcq

# The child: the walk is made to see every entry as a regular file (the swap, made
# deterministic), then read_bytes, find's worker and grade's worker meet the FIFO.
_CHILD = textwrap.dedent(
    """
    import json, sys
    from kagreport.grading._find import FindChunk, search_chunk
    from kagreport.kag import _tree
    from kagreport.kag._records import read_bytes
    from kagreport import grade

    datasets, results, fifo, good = sys.argv[1:]
    try:
        read_bytes(fifo)
        read = "read"
    except OSError as exc:
        read = exc.strerror
    found = search_chunk("hello", FindChunk([fifo, good], bytearray([1, 1])))
    _tree._kind = lambda entry: _tree.DIR if entry.is_dir(follow_symlinks=False) else _tree.FILE  # the walk saw a regular file there
    report = grade(datasets, results, workers=1)
    print(json.dumps({
        "read": read,
        "find": [found.matches, found.skipped],
        "graded": len(report.items),
        "unparsable": list(report.unparsable_files),
    }))
    """
)


def test_fifo_swapped_in_after_the_walk_is_refused_without_blocking(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    good = tree.ok("ds", "q1", "s", "hello")
    fifo = tree.results / "ds" / "q1" / "t.json"
    os.mkfifo(fifo)
    # Old code: os.open(fifo, O_RDONLY) waits for a writer: the child times out.
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tree.datasets_path), str(tree.results), str(fifo),
         str(good)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["read"] == "not a regular file"
    # find: warned about as "not a regular file" (as a FIFO the walk sees), the match kept.
    assert out["find"] == [[[str(good), "hello"]], [[str(fifo), "read", "not a regular file"]]]
    # stats: skipped, as the walk skips what is not a regular file; the other file graded.
    assert out["graded"] == 1
    assert out["unparsable"] == []


def test_read_bytes_reads_files_of_every_size_whole(tmp_path: os.PathLike[str]) -> None:
    from kagreport.kag._records import read_bytes

    # Around the sizes the reader once treated apart (one 64 KiB read), and empty.
    for size in (0, 1, 65535, 65536, 65537, 3 * 65536 + 7):
        path = os.path.join(tmp_path, f"f{size}")
        body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        with open(path, "wb") as file:
            file.write(body)
        assert read_bytes(path) == body
