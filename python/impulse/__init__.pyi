from ._impulse import *  # noqa: F401,F403
from ._impulse import __version__ as __version__
from . import envs as envs

DATA_DIR: str
