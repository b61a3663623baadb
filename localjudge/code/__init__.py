"""The public path of the code judge (mirror of ``openevals.code``): :mod:`localjudge._judges.code`.

How code is taken out of an answer is in :mod:`localjudge._prompts.code`.
"""

from .._judges.code import *  # noqa: F403
from .._judges.code import __all__  # noqa: F401
