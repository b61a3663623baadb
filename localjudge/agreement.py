"""The public path of :mod:`localjudge._trust.agreement`: ``localjudge.agreement.agreement(records, labels)``."""

from ._trust.agreement import *  # noqa: F403
from ._trust.agreement import __all__  # noqa: F401
