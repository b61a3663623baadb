"""Mirror of ``openevals.trajectory.llm``: the public path of :mod:`localjudge.judges.trajectory`."""

from ..judges.trajectory import *  # noqa: F403
from ..judges.trajectory import __all__  # noqa: F401
