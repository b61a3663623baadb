"""The public path of :mod:`localjudge.datasets.ray`: ``from localjudge.ray_batch import score_on_ray``."""

from .datasets.ray import *  # noqa: F403
from .datasets.ray import __all__  # noqa: F401
