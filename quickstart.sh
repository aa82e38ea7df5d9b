#!/usr/bin/env bash
# Sets up Sonar in .venv and runs the quickstart evaluation on the bundled demo dataset.
# The result folder lands in reports/quickstart-<timestamp>/ (open its index.html).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The build backend is chatty even with --quiet: keep its output in a log, show it on failure.
if ! { .venv/bin/python -m pip install --quiet --upgrade pip &&
       .venv/bin/python -m pip install --quiet -e '.[test]'; } > .venv/install.log 2>&1; then
  cat .venv/install.log >&2
  echo "quickstart: installing Sonar failed (log above, also in .venv/install.log)" >&2
  exit 1
fi
.venv/bin/sonar run configs/quickstart.yaml "$@"
