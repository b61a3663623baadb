"""The public path of :mod:`localjudge.trust.correction`, the corrections as arithmetic on probabilities."""

from .trust.correction import *  # noqa: F403
from .trust.correction import __all__  # noqa: F401
