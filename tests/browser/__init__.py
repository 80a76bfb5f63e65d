"""Browser tests of the static report site (a package so its conftest does not shadow tests/conftest.py)."""
