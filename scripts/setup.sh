#!/usr/bin/env bash
# Sets up icedtea-jupyter on a Debian/Ubuntu machine with Python 3.11+: Java for Spark,
# a virtualenv in .venv with the package (editable) and its JupyterLab extension.
# Idempotent and quick when nothing changed. Usage: scripts/setup.sh [--with-browser]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf '\033[1m[icedtea setup]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[icedtea setup]\033[0m %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

apt_install() {
  command -v apt-get >/dev/null || return 1
  if [ -z "${ICEDTEA_APT_UPDATED:-}" ]; then
    as_root apt-get update -q >/dev/null || return 1
    export ICEDTEA_APT_UPDATED=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
}

# --- Java (Spark needs 17+) ---------------------------------------------------------
if ! command -v java >/dev/null; then
  say "installing Java 17 for Spark"
  apt_install openjdk-17-jre-headless ||
    die "Spark needs Java 17 or newer: install it (e.g. 'sudo apt-get install openjdk-17-jre-headless') and run this again"
fi

# --- Python 3.11+ ------------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
  die "icedtea-jupyter needs Python 3.11 or newer (found: $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv ||
  die "Python's venv module is missing: install python3-venv"

# --- Node.js builds the JupyterLab extension ------------------------------------------
if ! command -v node >/dev/null || ! node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a==20&&b>=19)?0:1)'; then
  say "installing Node.js (the extension build needs Node >= 20.19)"
  apt_install nodejs npm || die "install Node.js 20.19 or newer to build the JupyterLab extension"
fi

# --- the virtualenv ----------------------------------------------------------------
[ -x .venv/bin/python ] || { say "creating .venv"; "$PYTHON" -m venv .venv; }
export PATH="$ROOT/.venv/bin:$PATH"  # the extension build calls jlpm from jupyterlab
stamp_file=.venv/.icedtea-setup
stamp="$(cat pyproject.toml labextension/package.json labextension/yarn.lock 2>/dev/null | sha256sum | cut -c1-16)-$(find labextension/src labextension/style -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16)"
if [ "$(cat "$stamp_file" 2>/dev/null)" != "$stamp" ] || [ ! -f icedtea_jupyter/labextension/package.json ]; then
  say "installing Python packages and building the JupyterLab extension (first time: a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  # build tools first (wheel: pyspark ships as a source package and is built here), then an
  # editable install without build isolation (seconds, not minutes)
  .venv/bin/python -m pip install -q setuptools wheel hatchling "hatch-jupyter-builder>=0.9" editables \
    "jupyterlab>=4.6,<4.7"
  .venv/bin/python -m pip install -q --no-build-isolation -e ".[test]"
  .venv/bin/jupyter-builder develop --overwrite . >/dev/null
  echo "$stamp" > "$stamp_file"
fi
.venv/bin/jupyter labextension list 2>&1 | grep -q "icedtea-jupyter.*enabled.*OK" ||
  die "the icedtea-jupyter JupyterLab extension is not installed correctly: see 'jupyter labextension list'"

# --- a browser for the UI tests ------------------------------------------------------
if [ "${1:-}" = "--with-browser" ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Chromium for the browser tests"
  apt_install chromium || die "the browser tests need Debian's chromium at /usr/bin/chromium"
fi
say "ready: $(.venv/bin/python -c 'import pyspark, jupyterlab; print("pyspark", pyspark.__version__, "· jupyterlab", jupyterlab.__version__)')"
