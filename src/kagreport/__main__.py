"""``python -m kagreport``."""

from __future__ import annotations

import sys

try:
    from kagreport.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C while the command line loads, before main() handles it
    sys.stderr.write("kagreport: interrupted\n")
    code = 130
sys.exit(code)
