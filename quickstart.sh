#!/usr/bin/env bash
# Sets up Sonar in .venv and runs the quickstart evaluation on the bundled demo dataset, then the
# robustness demo (configs/robustness.yaml) and the benchmark demo. The result folders land in
# reports/quickstart-<timestamp>/, reports/robustness-<timestamp>/ and reports/run-<timestamp>/ (open their index.html).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The build backend is chatty even with --quiet: keep its output in a log, show it on failure.
if ! { .venv/bin/python -m pip install --quiet --upgrade pip &&
       .venv/bin/python -m pip install --quiet -e '.[all,test]'; } > .venv/install.log 2>&1; then
  cat .venv/install.log >&2
  echo "quickstart: installing Sonar failed (log above, also in .venv/install.log)" >&2
  exit 1
fi
# The embedded local LM (SmolLM2-135M-Instruct) is prepared once into Sonar's model store
# (~/.cache/sonar/models); evaluators that need it are skipped, with the reason, if this fails.
if ! .venv/bin/sonar models prepare smollm2 > .venv/prepare.log 2>&1; then
  cat .venv/prepare.log >&2
  echo "quickstart: could not prepare SmolLM2-135M-Instruct; continuing without it" >&2
fi
.venv/bin/sonar run configs/quickstart.yaml "$@"
# The robustness demo: a bundled test suite asked of two models under test (SmolLM2 sampling, and a
# lookup-table function that typos break), answers journaled and written to the run folder, then scored.
.venv/bin/sonar run configs/robustness.yaml "$@"
# The benchmark demo: the demo dataset graded on the "assistant safety" benchmark (privacy, encoding
# attacks, toxicity) against its bundled standards; the grade table opens index.html (docs/benchmarks.md).
.venv/bin/sonar run --benchmark assistant_safety --dataset demo "$@"
