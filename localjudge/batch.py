"""The public path of :mod:`localjudge.datasets.batch`: ``from localjudge.batch import score_rows``."""

from .datasets.batch import *  # noqa: F403
from .datasets.batch import __all__  # noqa: F401
