"""impulse_viz: read Impulse recordings (recording.py) and plot runs (plot.py).

Pure Python with numpy (and matplotlib for plots); it does not need the compiled bindings.
"""
from .recording import Recording, RecordingError

__all__ = ["Recording", "RecordingError"]
