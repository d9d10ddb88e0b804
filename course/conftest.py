"""Lets plain pytest collect the checks declared as data in each chapter's exercises.py (grader/pytest_plugin.py)."""

from grader.pytest_plugin import (  # noqa: F401  (pytest finds hooks by name)
    pytest_addoption,
    pytest_collect_file,
    pytest_collection_modifyitems,
    pytest_configure,
)
