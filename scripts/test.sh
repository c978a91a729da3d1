#!/usr/bin/env bash
# Sets everything up, then runs the whole suite: the linters, TypeScript unit tests, Python unit and Spark
# tests (local and a standalone cluster on 127.0.0.1), the notebooks (nbval) and the
# browser tests in real JupyterLab and headless Chromium. Extra arguments go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" --with-browser
cd "$ROOT"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
echo "== Linters: ruff and mypy (Python), tsc --noEmit, eslint and prettier --check (TypeScript)"
.venv/bin/ruff check icedtea_jupyter tests bench notebooks
.venv/bin/mypy  # the kernel-side package; configured in pyproject.toml
(cd labextension && ../.venv/bin/jlpm typecheck)
(cd labextension && ../.venv/bin/jlpm lint && ../.venv/bin/jlpm format:check)
echo "== TypeScript unit tests"
(cd labextension && ../.venv/bin/jlpm test --silent)
echo "== Python, Spark, notebook and browser tests"
exec .venv/bin/python -m pytest tests notebooks --nbval-lax -n "${ICEDTEA_TEST_WORKERS:-2}" --dist loadscope -p no:cacheprovider --durations=30 "$@"
