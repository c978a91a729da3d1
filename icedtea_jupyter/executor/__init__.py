"""Code that runs inside Spark's Python workers.

This package is an island: it imports only the standard library, pyarrow (lazily,
to write files), PySpark's ``TaskContext`` and itself — never IPython, the comm
layer, the replay engine or charts. Everything here must survive cloudpickle, and
the per-record path does nothing but count, check a flag and call the operator.
"""
