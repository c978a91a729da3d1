"""Finding the Python operators of a cell by wrapping PySpark's API while it runs."""
from .patching import is_installed, recording
from .recorder import Recorder

__all__ = ["Recorder", "recording", "is_installed"]
