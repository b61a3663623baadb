"""Mirror of ``openevals.trajectory.llm``: the public path of :mod:`localjudge._judges.trajectory`."""

from .._judges.trajectory import *  # noqa: F403
from .._judges.trajectory import __all__  # noqa: F401
