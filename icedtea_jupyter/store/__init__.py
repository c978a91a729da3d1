"""The run store: one directory per run, a manifest and Arrow files a user can open."""
from .run_store import RunStore, StoreError

__all__ = ["RunStore", "StoreError"]
