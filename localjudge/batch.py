"""The public path of :mod:`localjudge._datasets.batch`: ``from localjudge.batch import score_rows``."""

from ._datasets.batch import *  # noqa: F403
from ._datasets.batch import __all__  # noqa: F401
