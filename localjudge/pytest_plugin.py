"""The public path of the pytest plugin, :mod:`localjudge.testing.pytest_plugin`: ``-p localjudge.pytest_plugin``."""

from .testing.pytest_plugin import (  # noqa: F401
    local_judge,
    local_judge_client,
    pytest_addoption,
    pytest_configure,
    pytest_terminal_summary,
    pytest_unconfigure,
)
