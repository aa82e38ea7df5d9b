"""An evaluator routed to some categories says in its reports that it scored a subset."""

from __future__ import annotations

import sonar_core
from sonar_core import names

from conftest import write_json

ROWS = [
    {"test_case_key": "t1", "model_key": "m1", "input": "q", "actual_output": "Fine, thanks.", "categories": ["a"]},
    {"test_case_key": "t2", "model_key": "m1", "input": "q", "actual_output": "Fine too.", "categories": ["b"]},
    {"test_case_key": "t3", "model_key": "m1", "input": "q", "actual_output": "Also fine.", "categories": ["c"]},
]


def test_reports_say_which_categories_were_scored(tmp_path):
    dataset = write_json(tmp_path / "d.json", ROWS)
    result = sonar_core.run(dataset=str(dataset), output_dir=str(tmp_path / "out"), run_id="r",
                            evaluators=[{"id": "toxicity", "categories": ["a", "c"]},
                                        {"id": "toxicity", "name": "toxicity_all"}])
    assert result.status == "success", result.message
    subset, whole = (result.run_dir / e["job_location"] for e in result.executed)
    report = (subset / names.WORK_DIR / names.REPORT_MD).read_text()
    assert "Scored a subset of the dataset: the 2 rows in the categories a, c." in report
    html = (subset / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text()
    assert "2 rows scored (a subset: only rows in the categories a, c)" in html
    assert "subset" not in (whole / names.WORK_DIR / names.REPORT_MD).read_text()
