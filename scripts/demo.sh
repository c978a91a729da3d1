#!/usr/bin/env bash
# Sets everything up, then opens the quick-start notebook in JupyterLab (Spark local mode).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT/notebooks"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
args=(--ServerApp.ip=127.0.0.1)
[ "$(id -u)" = 0 ] && args+=(--allow-root)
exec "$ROOT/.venv/bin/jupyter" lab "${args[@]}" quickstart.ipynb "$@"
