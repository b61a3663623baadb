"""The public path of :mod:`localjudge.trust.agreement`: ``localjudge.agreement.agreement(records, labels)``."""

from .trust.agreement import *  # noqa: F403
from .trust.agreement import __all__  # noqa: F401
