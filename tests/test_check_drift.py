"""`optimize --check`: real drift exits 1; the same plan from another solver build does not."""

from __future__ import annotations

import yaml
from conftest import run

from trnplan.testkit.builders import base_specs


def _setup(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "all.yaml").write_text(yaml.safe_dump(base_specs()))
    plans = tmp_path / "plans"
    args = ["--specs", str(specs), "--plans", str(plans)]
    result = run("optimize", "s", *args)
    assert result.exit_code == 0, result.output
    return plans / "s.yaml", args


def test_version_only_difference_is_not_drift(tmp_path) -> None:
    plan_file, args = _setup(tmp_path)
    text = plan_file.read_text()
    plan_file.write_text(text.replace("  version: ", "  version: 0.0.0-other-", 1))
    result = run("optimize", "s", "--check", *args)
    assert result.exit_code == 0, result.output
    assert "up to date (solved here by" in result.output


def test_a_changed_figure_is_drift(tmp_path) -> None:
    plan_file, args = _setup(tmp_path)
    data = yaml.safe_load(plan_file.read_text())
    data["binding"] = ["something else"]
    plan_file.write_text(yaml.safe_dump(data, sort_keys=True))
    result = run("optimize", "s", "--check", *args)
    assert result.exit_code == 1, result.output
    assert "out of date" in result.output


# --- the library behind it: trnplan.drift ------------------------------------------------------------


def test_drift_states_as_typed_results(tmp_path) -> None:
    from trnplan.drift import DriftState, check_drift, stale_plans
    from trnplan.errors import EXIT_DIFFERENT, EXIT_INVALID, EXIT_OK

    plan_file, _ = _setup(tmp_path)
    fresh = plan_file.read_text()
    same = check_drift(fresh, plan_file)
    assert (same.state, same.diff, same.exit_code) == (DriftState.UP_TO_DATE, [], EXIT_OK)

    missing = check_drift(fresh, tmp_path / "plans" / "nope.yaml")
    assert (missing.state, missing.exit_code) == (DriftState.MISSING, EXIT_DIFFERENT)

    plan_file.write_text(fresh.replace("  version: ", "  version: 0.0.0-other-", 1))
    other = check_drift(fresh, str(plan_file))
    assert other.state is DriftState.OTHER_SOLVER_BUILD and other.exit_code == EXIT_OK
    assert other.versions is not None and other.versions[0].startswith("0.0.0-other-")

    data = yaml.safe_load(fresh)
    data["binding"] = ["something else"]
    plan_file.write_text(yaml.safe_dump(data, sort_keys=True))
    drift = check_drift(fresh, plan_file)
    assert (drift.state, drift.exit_code) == (DriftState.OUT_OF_DATE, EXIT_DIFFERENT)
    assert drift.diff[0] == f"--- {plan_file} (on disk)" and "-- something else" in drift.diff

    plan_file.write_text("chips: {}\n")
    bad = check_drift(fresh, plan_file)
    assert (bad.state, bad.exit_code) == (DriftState.UNREADABLE, EXIT_INVALID)
    assert "not a trnplan plan file" in str(bad.error)

    (tmp_path / "plans" / "gone.yaml").write_text(fresh)
    assert stale_plans(tmp_path / "plans", ["s"]) == [tmp_path / "plans" / "gone.yaml"]
    assert stale_plans(tmp_path / "no-such-folder", ["s"]) == []
