"""What the docs say about the demo agrees with the demo dataset, and the README says how to reach `sonar`.

The README and docs/python-api.md said the demo had 66 test cases while the report, which counts the
dataset's distinct test case keys (run.json's ``unique_test_cases``), said 69 (issue 34).
"""

from __future__ import annotations

import re

from conftest import REPO
from sonar_core.dataset import load_dataset
from sonar_core.execution.runner import demo_dataset_path

#: How the docs state the demo's size: "69 test cases answered by 3 models", "69 test cases, 3 models".
_STATED = re.compile(r"(\d+) test cases(?:,| answered by) (\d+) models")


def _documents():
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def test_the_docs_state_the_demo_datasets_real_counts():
    demo = load_dataset(demo_dataset_path())
    summary = demo.summary()  # what run.json and the report show
    real = (summary["unique_test_cases"], len(summary["models"]))
    # Counted here from the rows too: every test case key once, every model key once.
    assert real == (len({row.test_case_key for row in demo.rows}), len({row.model_key for row in demo.rows}))
    stated = {}
    for path in _documents():
        for match in _STATED.finditer(path.read_text(encoding="utf-8")):
            stated.setdefault((int(match.group(1)), int(match.group(2))), []).append(path.relative_to(REPO).as_posix())
    found = {where for places in stated.values() for where in places}
    assert {"README.md", "docs/python-api.md"} <= found  # the statements this test was written for
    assert stated == {real: stated.get(real, [])}, f"the demo has {real[0]} test cases and {real[1]} models: {stated}"


def test_the_readme_says_how_to_put_sonar_on_the_path_before_its_first_sonar_example():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme.index("## Quick start")
    first_example = re.search(r"^sonar ", readme, re.MULTILINE)
    assert first_example is not None
    hint = readme.index("source .venv/bin/activate")
    assert quick_start < hint < first_example.start()
    assert ".venv/bin/sonar" in readme[quick_start:first_example.start()]
