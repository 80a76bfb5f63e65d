"""``python -m kagreport``."""

from __future__ import annotations

import sys

from kagreport.cli import main

sys.exit(main())
