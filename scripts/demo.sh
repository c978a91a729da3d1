#!/usr/bin/env bash
# Sets everything up, then opens the quick-start notebook in JupyterLab (Spark local mode).
# JupyterLab works on copies of notebooks/ in demo/ (git-ignored): what it saves there
# (outputs, the run store demo/.icedtea) leaves the tracked notebooks as they are. A copy
# is replaced only by a newer notebooks/ file; delete demo/ for fresh ones. Ctrl-C twice
# (or `.venv/bin/jupyter server stop 8888`, for the port it printed) stops the server.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
DEMO="$ROOT/demo"
mkdir -p "$DEMO"
cp -u "$ROOT"/notebooks/*.ipynb "$DEMO/"
cd "$DEMO"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
args=(--ServerApp.ip=127.0.0.1)
[ "$(id -u)" = 0 ] && args+=(--allow-root)
exec "$ROOT/.venv/bin/jupyter" lab "${args[@]}" quickstart.ipynb "$@"
