"""The public path of :mod:`localjudge._datasets.ray`: ``from localjudge.ray_batch import score_on_ray``."""

from ._datasets.ray import *  # noqa: F403
from ._datasets.ray import __all__  # noqa: F401
