"""Code that runs inside Spark's Python workers.

This package is an island: it imports only the standard library, pyarrow (lazily,
to write files), PySpark's ``TaskContext``, itself, and two modules made for it: the
store's layout (``store/layout.py``) and the checkpoint files (``checkpoints/file.py``)
— never IPython, the comm layer, the replay engine or charts. Everything here must
survive cloudpickle, and the per-record path does nothing but count, check a flag and
call the operator.
"""
