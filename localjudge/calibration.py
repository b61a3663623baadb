"""The public path of :mod:`localjudge._trust.correction`, the corrections as arithmetic on probabilities."""

from ._trust.correction import *  # noqa: F403
from ._trust.correction import __all__  # noqa: F401
