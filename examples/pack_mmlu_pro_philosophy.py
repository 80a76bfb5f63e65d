"""Pack the unpacked MMLU-Pro philosophy run into the archive the package ships.

Input: ``examples/mmlu-pro-philosophy/`` (what ``build_mmlu_pro_philosophy.py`` writes: the
reviewable form, one file per result). Output: ``src/kagreport/examples/mmlu-pro-philosophy/``
``mmlu-pro-philosophy.tar.xz`` and, beside it uncompressed, the run's ``README.md`` (source
and licence). ``kagreport.examples.mmlu_pro_philosophy()`` unpacks the archive into a cache
folder on first use. The tar stream is deterministic (sorted, owner 0, mode 0644, time 0);
``tests/examples/test_example_archive.py`` checks that the archive holds exactly the tree.

Usage: ``python examples/pack_mmlu_pro_philosophy.py [TREE] [PACKAGE_FOLDER]``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from kagreport.examples._archive import pack

HERE = Path(__file__).resolve().parent
TREE = HERE / "mmlu-pro-philosophy"
PACKAGED = HERE.parent / "src" / "kagreport" / "examples" / "mmlu-pro-philosophy"
ARCHIVE = "mmlu-pro-philosophy.tar.xz"


def main(argv: list[str]) -> int:
    tree = Path(argv[1]) if len(argv) > 1 else TREE
    out = Path(argv[2]) if len(argv) > 2 else PACKAGED
    out.mkdir(parents=True, exist_ok=True)
    pack(tree, out / ARCHIVE)
    shutil.copyfile(tree / "README.md", out / "README.md")
    size = (out / ARCHIVE).stat().st_size
    print(f"wrote {out / ARCHIVE} ({size:,} bytes) and {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
