"""The sandbox tests share the session's worker (tests/conftest.py)."""
