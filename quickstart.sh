#!/usr/bin/env bash
# Sets up Sonar in .venv and runs the quickstart evaluation on the bundled demo dataset.
# The result folder lands in reports/quickstart-<timestamp>/ (open its index.html).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/sonar run configs/quickstart.yaml "$@"
