"""`optimize --check`: real drift exits 1; the same plan from another solver build does not."""

from __future__ import annotations

import yaml
from builders import base_specs
from typer.testing import CliRunner

from trnplan.cli import app

ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


def _setup(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "all.yaml").write_text(yaml.safe_dump(base_specs()))
    plans = tmp_path / "plans"
    args = ["--specs", str(specs), "--plans", str(plans)]
    result = CliRunner().invoke(app, ["optimize", "s", *args], env=ENV)
    assert result.exit_code == 0, result.output
    return plans / "s.yaml", args


def test_version_only_difference_is_not_drift(tmp_path) -> None:
    plan_file, args = _setup(tmp_path)
    text = plan_file.read_text()
    plan_file.write_text(text.replace("  version: ", "  version: 0.0.0-other-", 1))
    result = CliRunner().invoke(app, ["optimize", "s", "--check", *args], env=ENV)
    assert result.exit_code == 0, result.output
    assert "up to date (solved here by" in result.output


def test_a_changed_figure_is_drift(tmp_path) -> None:
    plan_file, args = _setup(tmp_path)
    data = yaml.safe_load(plan_file.read_text())
    data["binding"] = ["something else"]
    plan_file.write_text(yaml.safe_dump(data, sort_keys=True))
    result = CliRunner().invoke(app, ["optimize", "s", "--check", *args], env=ENV)
    assert result.exit_code == 1, result.output
    assert "out of date" in result.output
