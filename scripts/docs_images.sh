#!/usr/bin/env bash
# Retake the README's screenshots (docs/images/) in real JupyterLab and headless Chromium.
# Builds the extension, runs tests/browser/docs_images.py and the live-control and alerts
# browser tests (which write to test-artifacts/ only, like every test), then copies their
# screenshots into docs/images/. Run it after a change of the sidebar's or the panel's look.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
export PATH="$(dirname "$PY"):$PATH"  # the extension's build scripts call jlpm
(cd labextension && "$(dirname "$PY")/jlpm" build:prod)
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m pytest tests/browser/docs_images.py \
  tests/browser/test_live_control.py tests/browser/test_alerts.py -p no:cacheprovider "$@"
mkdir -p docs/images
# live_control and agents: taken by test_live_control.py (a breakpoint's hit) and
# test_alerts.py (the Alerts section while the run records)
for name in sidebar time_travel main_area skew lineage live_control agents; do
  cp "test-artifacts/docs-$name.png" "docs/images/$name.png"
  echo "docs/images/$name.png"
done
