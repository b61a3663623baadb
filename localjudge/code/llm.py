"""Mirror of ``openevals.code.llm``: the public path of :mod:`localjudge._judges.code`."""

from .._judges.code import *  # noqa: F403
from .._judges.code import __all__  # noqa: F401
