"""pytest set-up: the repository root, and the impulse package from the build tree when it is not
installed (PYTHONPATH=build/python is what scripts/test.sh sets)."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import impulse  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def stand_file():
    return os.path.join(ROOT, "models", "worlds", "anymal_stand.xml")


@pytest.fixture
def anymal_urdf():
    return os.path.join(ROOT, "models", "anymal", "anymal.urdf")
