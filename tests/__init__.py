"""The test suite: a package, so pytest puts the repository root on sys.path and `tests.*` imports resolve."""
