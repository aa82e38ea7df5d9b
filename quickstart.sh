#!/usr/bin/env bash
# Sets up Sonar in .venv and runs the quickstart evaluation on the bundled demo dataset, then the
# robustness demo (configs/robustness.yaml) and the benchmark demo. The result folders land in
# reports/quickstart-<timestamp>/, reports/robustness-<timestamp>/ and reports/run-<timestamp>/ (open their index.html).
# Arguments are passed to each `sonar run` (e.g. --no-progress). Progress lines go to standard error.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
say() { echo "quickstart: $*" >&2; }
started=$SECONDS
since() { echo "$(( SECONDS - $1 )) s"; }

if [ ! -x .venv/bin/python ]; then
  say "creating the virtual environment .venv…"
  "$PYTHON" -m venv .venv
fi
# The build backend is chatty even with --quiet: keep its output in a log, show it on failure.
step=$SECONDS
say "installing Sonar and its dependencies into .venv (a few minutes the first time; log: .venv/install.log)…"
if ! { .venv/bin/python -m pip install --quiet --upgrade pip &&
       .venv/bin/python -m pip install --quiet -e '.[all,test]'; } > .venv/install.log 2>&1; then
  cat .venv/install.log >&2
  echo "quickstart: installing Sonar failed (log above, also in .venv/install.log)" >&2
  exit 1
fi
say "installed ($(since "$step"))"
# The embedded local LM (SmolLM2-135M-Instruct) is prepared once into Sonar's model store
# (~/.cache/sonar/models); evaluators that need it are skipped, with the reason, if this fails.
step=$SECONDS
say "preparing SmolLM2-135M-Instruct, the local model and judge (once; log: .venv/prepare.log)…"
if ! .venv/bin/sonar models prepare smollm2 > .venv/prepare.log 2>&1; then
  cat .venv/prepare.log >&2
  echo "quickstart: could not prepare SmolLM2-135M-Instruct; continuing without it" >&2
else
  say "SmolLM2 ready ($(since "$step"))"
fi
step=$SECONDS
say "1/3 the demo evaluation (configs/quickstart.yaml)…"
.venv/bin/sonar run configs/quickstart.yaml "$@"
say "1/3 done ($(since "$step"))"
# The robustness demo: a bundled test suite asked of two models under test (SmolLM2 sampling, and a
# lookup-table function that typos break), answers journaled and written to the run folder, then scored.
step=$SECONDS
say "2/3 the robustness demo (configs/robustness.yaml): two models under test answer a test suite…"
.venv/bin/sonar run configs/robustness.yaml "$@"
say "2/3 done ($(since "$step"))"
# The benchmark demo: the demo dataset graded on the "assistant safety" benchmark (privacy, encoding
# attacks, toxicity) against its bundled standards; the grade table opens index.html (docs/benchmarks.md).
step=$SECONDS
say "3/3 the benchmark demo (assistant_safety on the demo dataset)…"
.venv/bin/sonar run --benchmark assistant_safety --dataset demo "$@"
say "3/3 done ($(since "$step")); all done in $(since "$started"). Open each run folder's index.html (paths above)."
