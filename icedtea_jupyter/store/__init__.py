"""The run store: one directory per run, a manifest and Arrow files a user can open.

``layout.py`` names every entry of a run directory (and is the one module of this
package that Spark's Python workers import); ``run_store.py`` is ``RunStore``, the
manifest, worker table, alerts and JSON-lines files; the other modules read and write
one kind of file each.
"""
