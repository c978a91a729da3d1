"""Record-level lineage (Titian): ``run.trace_back(row)``, ``run.trace_forward(record)``.

Workers capture links with ``--lineage`` (``executor/lineage.py``); ``tables.py`` reads
them, ``graph.py`` says how they chain through the DAG, ``engine.py`` joins them in
DuckDB, ``trace.py`` walks them, ``records.py`` regenerates the records.
"""
