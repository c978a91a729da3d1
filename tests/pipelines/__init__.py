"""A generator of PySpark pipelines and the oracles each feature's promises are checked
against (issue 37): ``grammar`` draws pipelines, ``emulator`` computes their results and
lineage in plain Python, ``oracles`` runs them plain and under ``%%icedtea`` and checks."""
