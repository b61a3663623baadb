"""Mirror of ``openevals.code.llm``: the public path of :mod:`localjudge.judges.code`."""

from ..judges.code import *  # noqa: F403
from ..judges.code import __all__  # noqa: F401
