"""Speed measurements (never timed assertions in tests), each a module run from the repository root:
`.venv/bin/python -m benchmarks.NAME` (scripts/__init__.py says why; its ROOT is the one these use).
"""
