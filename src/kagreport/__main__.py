"""``python -m kagreport``."""

from __future__ import annotations

import sys

from kagreport._entry import main

sys.exit(main())
