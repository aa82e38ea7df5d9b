"""A run setting is declared once, as a field of RunConfig: the field makes the ``sonar run`` option (its help
the field's description), the ``sonar_core.run`` keyword and run.json's record (issue 37, docs/cli.md "Adding
a setting"). A made-up setting shows it end to end; the last tests fail when the options, the API, the model
and docs/cli.md's table disagree."""

from __future__ import annotations

import inspect
import json
import re
from typing import Annotated

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from sonar_core.cli.run import OWN_OPTIONS, make_run_command, run_command
from sonar_core.cli.settings import COMPOSITE, flag_of, option_name
from sonar_core.config import Flag, RunConfig
from sonar_core.errors import ConfigError

from conftest import REPO


class WithEcho(RunConfig):
    """RunConfig and one made-up setting, declared as any setting is: one field."""

    echo_count: Annotated[int, Flag(metavar="N")] = Field(0, ge=0, le=9, description="Echo N times.")


def _parameters(run_dir) -> dict:
    return json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["interpretation_parameters"]


def test_a_made_up_setting_is_an_option_with_its_help(tmp_path):
    shown = CliRunner().invoke(make_run_command(WithEcho), ["--help"])
    assert shown.exit_code == 0
    assert re.search(r"^  --echo-count N +Echo N times\.$", shown.output, re.M), shown.output
    # The real command, made from RunConfig, has no such option.
    assert "--echo-count" not in CliRunner().invoke(cli, ["run", "--help"]).output


def test_a_made_up_setting_reaches_run_json_from_the_flag_the_file_and_the_api(tmp_path):
    command = make_run_command(WithEcho)
    common = ["-d", "demo", "-e", "text_matching", "-o", str(tmp_path), "--no-progress", "--no-cache"]
    flagged = CliRunner().invoke(command, [*common, "--run-id", "flag", "--echo-count", "3"])
    assert flagged.exit_code == 0, flagged.stderr
    assert _parameters(tmp_path / "flag")["echo_count"] == 3
    config = tmp_path / "c.yaml"
    config.write_text("echo_count: 4\n", encoding="utf-8")
    from_file = CliRunner().invoke(command, [str(config), *common, "--run-id", "file"])
    assert from_file.exit_code == 0, from_file.stderr
    assert _parameters(tmp_path / "file")["echo_count"] == 4
    # The option is checked by the field's bounds, in the configuration's words.
    refused = CliRunner().invoke(command, [*common, "--run-id", "bad", "--echo-count", "10"])
    assert refused.exit_code == 2
    assert refused.stderr == ("error: <command line>: configuration key 'echo_count': "
                              "Input should be less than or equal to 9\n")
    result = sonar_core.run(WithEcho(dataset="demo", evaluators=["text_matching"]), echo_count=2,
                            output_dir=tmp_path, run_id="api", no_cache=True)
    assert result.exit_code == 0
    assert _parameters(tmp_path / "api")["echo_count"] == 2
    # Left out, the default is recorded.
    sonar_core.run(WithEcho(dataset="demo", evaluators=["text_matching"]), output_dir=tmp_path, run_id="default",
                   no_cache=True)
    assert _parameters(tmp_path / "default")["echo_count"] == 0


def test_a_setting_of_no_model_is_refused_naming_the_nearest():
    with pytest.raises(ConfigError) as raised:
        sonar_core.run(dataset="demo", echo_count=2)
    assert str(raised.value) == "<command line>: unknown configuration key 'echo_count'"
    with pytest.raises(ConfigError) as raised:
        sonar_core.run(WithEcho(dataset="demo"), echo_cuont=2)
    assert str(raised.value) == "<command line>: unknown configuration key 'echo_cuont' (did you mean 'echo_count'?)"
    with pytest.raises(ConfigError) as raised:
        sonar_core.run(dataset="demo", bootstrap_resample=200)
    assert str(raised.value) == ("<command line>: unknown configuration key 'bootstrap_resample' "
                                 "(did you mean 'bootstrap_resamples'?)")


def _options(command: click.Command) -> dict[str, click.Parameter]:
    return {param.name: param for param in command.params}


def _composite_options() -> set[str]:
    names_ = set()
    for add, _ in COMPOSITE.values():
        names_ |= {param.name for param in click.command()(add(lambda **_: None)).params}
    return names_


def test_the_run_options_are_the_flagged_settings_and_the_commands_own():
    options = _options(run_command)
    flagged = {name: field for name, field in RunConfig.model_fields.items() if flag_of(field) is not None}
    assert set(options) == set(OWN_OPTIONS) | set(flagged) | _composite_options()
    assert set(COMPOSITE) <= set(RunConfig.model_fields) and not set(COMPOSITE) & set(flagged)
    for name, field in flagged.items():
        option = options[name]
        assert option_name(name, flag_of(field)) in option.opts + option.secondary_opts
        assert option.help == field.description and field.description
        # Unset, an option leaves the configuration file's value (or the field's default).
        assert option.default is None
    # The command's own options set no configuration key; a composite setting's options only its own.
    assert not set(OWN_OPTIONS) & set(RunConfig.model_fields)
    assert _composite_options() & set(RunConfig.model_fields) <= set(COMPOSITE)


def test_the_api_takes_every_setting_and_documents_it():
    parameters = inspect.signature(sonar_core.run).parameters
    assert list(parameters) == ["config", *RunConfig.model_fields, "progress"]
    for name, field in RunConfig.model_fields.items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY and parameters[name].default is None
        assert field.description, name
        first_words = " ".join(field.description.split()[:4])
        assert f"\n        {name}: {first_words}" in sonar_core.run.__doc__


def test_every_setting_has_its_row_in_docs_cli():
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text[text.index("## `sonar run`"):text.index("## `sonar calibrate`")]
    documented, flags = set(), set()
    for line in section.splitlines():
        cells = line.replace("\\|", "/").split("|")
        if line.startswith("| ") and len(cells) == 5:
            documented |= {re.split(r"[.\[]", key)[0] for key in re.findall(r"`([^`]+)`", cells[2])}
            flags |= set(re.findall(r"(--[a-z-]+)", cells[1]))
    assert documented == set(RunConfig.model_fields)
    options = _options(run_command)
    shown = {opt for option in options.values() for opt in option.opts + option.secondary_opts if opt.startswith("--")}
    assert shown - {"--help"} <= flags | {"--no-" + f.removeprefix("--") for f in flags}, shown - flags


def _shared_commands():
    from sonar_core.cli.benchmarks import CALIBRATE_SETTINGS, calibrate_command
    from sonar_core.cli.redteam import RUN_SETTINGS, redteam_command

    # Options of the command's own that a run setting's name: redteam's --standards sets its redteam: section's
    # key (hazards graded on attacks); calibrate's --benchmark is required (the one to calibrate) and its --host
    # also takes the keys of reference models.
    return [(redteam_command, RUN_SETTINGS, {"standards"}),
            (calibrate_command, CALIBRATE_SETTINGS, {"benchmark", "hosts"})]


@pytest.mark.parametrize("index", [0, 1], ids=["redteam", "calibrate"])
def test_redteam_and_calibrate_take_run_settings_from_the_one_declaration(index):
    command, shared, own = _shared_commands()[index]
    options, run = _options(command), _options(run_command)
    assert {"output_dir", "run_id", "plugins"} <= set(shared)
    # Every option that sets a run setting is made from its field; the command declares none of them itself.
    assert {name for name in options if name in RunConfig.model_fields} - own == set(shared)
    for name in shared:
        option, field, same = options[name], RunConfig.model_fields[name], run[name]
        assert option.help == field.description == same.help
        assert option_name(name, flag_of(field)) in option.opts + option.secondary_opts
        assert (option.default, option.multiple, option.is_flag, option.metavar) == \
               (None, same.multiple, same.is_flag, same.metavar)
        assert type(option.type) is type(same.type)
    shown = CliRunner().invoke(command, ["--help"])
    assert shown.exit_code == 0
    assert "Folder that receives the run folder (default: reports)." in " ".join(shown.output.split())


def test_calibrate_gives_output_dir_no_short_flag_as_o_is_its_standards_file():
    from sonar_core.cli.benchmarks import calibrate_command

    options = _options(calibrate_command)
    assert options["output_dir"].opts == ["--output-dir"]
    assert options["output"].opts == ["--output", "-o"]


def test_a_made_up_setting_reaches_another_command_through_run_options():
    from sonar_core.cli.settings import run_options, settings_from_flags

    @click.command()
    @run_options("output_dir", "echo_count", model=WithEcho)
    def other(**flags):
        click.echo(json.dumps(settings_from_flags(flags, WithEcho, only=("output_dir", "echo_count"))))

    shown = CliRunner().invoke(other, ["--help"])
    assert re.search(r"^  --echo-count N +Echo N times\.$", shown.output, re.M), shown.output
    given = CliRunner().invoke(other, ["-o", "out", "--echo-count", "3"])
    assert json.loads(given.output) == {"output_dir": "out", "echo_count": 3}
    assert json.loads(CliRunner().invoke(other, []).output) == {"output_dir": None, "echo_count": None}
    with pytest.raises(ValueError, match="not a setting with a flag: batch_size"):
        run_options("batch_size")
