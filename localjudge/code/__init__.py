"""The public path of the code judge (mirror of ``openevals.code``): :mod:`localjudge.judges.code`.

How code is taken out of an answer is in :mod:`localjudge.prompts.code`.
"""

from ..judges.code import *  # noqa: F403
from ..judges.code import __all__  # noqa: F401
