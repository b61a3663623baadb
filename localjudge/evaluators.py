"""The public path of :mod:`localjudge._judges.evaluators`: ``from localjudge.evaluators import correctness``."""

from ._judges.evaluators import *  # noqa: F403
from ._judges.evaluators import __all__  # noqa: F401
