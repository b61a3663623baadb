"""The public path of :mod:`localjudge.judges.evaluators`: ``from localjudge.evaluators import correctness``."""

from .judges.evaluators import *  # noqa: F403
from .judges.evaluators import __all__  # noqa: F401
