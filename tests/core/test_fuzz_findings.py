"""What bench/fuzz.py --minutes 30 found, each a one-line error before anything is written: an empty or blank
path setting (an empty output_dir put the run beside the configuration, a blank llm_cache made a file named
with spaces), and a CSV header naming a column twice (datatable warned on a line of its own)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sonar_core.cli import cli


@pytest.mark.parametrize("flag, key, value", [("-o", "output_dir", ""), ("--llm-cache", "llm_cache", "   "),
                                              ("--llm-configs", "llm_configs", "\t")])
def test_a_blank_path_is_refused_in_one_line_and_nothing_is_written(tmp_path, monkeypatch, flag, key, value):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["run", "-d", "demo", "-e", "looping_detection", "--no-progress", flag, value])
    assert result.exit_code == 2, result.output  # a configuration error (docs/cli.md: exit codes)
    assert result.output == f"error: <command line>: configuration key '{key}': a path cannot be empty or blank\n"
    assert list(tmp_path.iterdir()) == []


def test_a_blank_path_in_a_yaml_file_is_named_with_its_file(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("dataset: demo\noutput_dir: ' '\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(config), "--no-progress"])
    assert result.exit_code == 2, result.output  # a configuration error (docs/cli.md: exit codes)
    assert result.output == f"error: {config}: configuration key 'output_dir': a path cannot be empty or blank\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.yaml"]


def test_a_csv_header_with_a_column_named_twice_is_one_line(tmp_path):
    # Found by bench/fuzz.py --minutes 30: datatable renamed the second column and warned on a line of its own.
    data = tmp_path / "d.csv"
    data.write_text("input,actual_output,input\nq,a,r\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "-d", str(data), "-e", "text_matching", "--no-progress",
                                      "-o", str(tmp_path / "out")])
    assert result.exit_code == 3, result.output
    assert result.output == f"error: {data}: header: two columns are named 'input'\n"
