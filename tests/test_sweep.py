"""`trnplan sweep`: grids and Monte Carlo runs on Dask (a LocalCluster, and the session's scheduler and
workers started as separate processes on 127.0.0.1: tests/conftest.py), every row checked against
`plan_scenario` with the same overrides to the cent; resuming a killed sweep; `ranges` in specs; bad input
failing cleanly before any run.

The world is the builders' tiny one (chip x, forms air8/liq16, scenario s: 64 chips) with a second site b.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import conftest
import pytest
import yaml
from conftest import TERMINAL, run

from trnplan.errors import EXIT_INVALID, EXIT_USAGE
from trnplan.plan.build import plan_scenario
from trnplan.specs.load import inputs_digest, load_specs
from trnplan.sweep.grid import Ranged, ranged_fields, sample_runs

pytest.importorskip("distributed")

BIN = Path(sys.executable).parent
GRID = ["--vary", "chips.x.unit_usd=5000,15000", "--vary", "sites.*.electricity_usd_per_kwh=0.05:0.2:2"]


def world_data() -> dict:
    return conftest.ranged_two_sites()


@pytest.fixture()
def specs(tmp_path) -> Path:
    return conftest.spec_folder(tmp_path, world_data())


def expanded(row_set: dict, catalog_sites: list[str]) -> list[str]:
    """The `--set` overrides a row's set stands for (a `sites.*` path set at every site)."""
    out = []
    for path, value in row_set.items():
        kind, _, rest = path.partition(".")
        entity, _, field = rest.partition(".")
        ids = catalog_sites if entity == "*" else [entity]
        out += [f"{kind}.{i}.{field}={json.dumps(value)}" for i in ids]
    return out


def assert_rows_match(rows: list[dict], specs: Path) -> None:
    """Every row's figures are what solving its overrides in this process gives, to the cent."""
    for row in rows:
        catalog = load_specs([specs], expanded(row["set"], ["a", "b"]))
        plan = plan_scenario(catalog, "s", alternatives=0)
        assert row["status"] == plan.status == "optimal"
        assert round(row["tco_usd"] * 100) == round(plan.totals.tco_usd * 100)
        assert round(row["capex_usd"] * 100) == round(plan.totals.capex_usd * 100)
        choices = {
            s: sorted({f"{d.form}/{d.cooling}/{d.scale_up_switch}/{site.scale_out.switch}"
                       for d in site.deployments})
            for s, site in plan.sites.items() if site.deployments
        }
        assert row["choices"] == choices


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def a_row(number: int, values: dict, **extra) -> dict:
    """A row as a sweep writes one (an optimal run's figures made up)."""
    return {"run": number, "set": values, "status": "optimal", "tco_usd": 1e6, "capex_usd": 5e5,
            "objective": 1e6, "choices": {"a": ["liq16/liquid/sw/so"]}, **extra}


def test_grid_on_a_local_cluster_matches_plan_scenario(specs, tmp_path):
    out = tmp_path / "rows.jsonl"
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--workers", "2", "--out", str(out),
                 "-f", "json")
    assert result.exit_code == 0, result.stderr
    rows = read_rows(out)
    assert sorted(r["run"] for r in rows) == [0, 1, 2, 3]
    assert {json.dumps(r["set"], sort_keys=True) for r in rows} == {
        json.dumps({"chips.x.unit_usd": u, "sites.*.electricity_usd_per_kwh": e}, sort_keys=True)
        for u in (5000, 15000) for e in (0.05, 0.2)
    }
    assert_rows_match(rows, specs)
    # whose sweep each row is: the scenario, and the digest a plan of the unvaried specs records
    plain = plan_scenario(load_specs([specs]), "s", alternatives=0)
    assert {(r["scenario"], r["base_inputs_digest"]) for r in rows} == {("s", plain.inputs_digest)}
    summary = json.loads(result.stdout)
    assert summary["runs"] == summary["finished"] == 4
    assert summary["status"] == {"optimal": 4}
    tcos = sorted(r["tco_usd"] for r in rows)
    assert summary["tco_usd"]["min"] == tcos[0] and summary["tco_usd"]["max"] == tcos[-1]
    bars = {b["path"]: b for b in summary["tornado"]["inputs"]}
    assert set(bars) == {"chips.x.unit_usd", "sites.*.electricity_usd_per_kwh"}
    low = [r["tco_usd"] for r in rows if r["set"]["chips.x.unit_usd"] == 5000]
    assert bars["chips.x.unit_usd"]["tco_low_usd"] == pytest.approx(sum(low) / len(low))
    # the chip price moves TCO by 64 chips x $10,000 at least: it heads the tornado
    assert summary["tornado"]["inputs"][0]["path"] == "chips.x.unit_usd"


def test_grid_on_a_scheduler_and_workers_started_as_processes(specs, tmp_path, dask_address):
    """The session's cluster (tests/conftest.py): a scheduler and workers started as processes."""
    out = tmp_path / "rows.jsonl"
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address, "--out", str(out),
                 "-f", "json")
    assert result.exit_code == 0, result.stderr
    rows = read_rows(out)
    assert len(rows) == 4
    assert_rows_match(rows, specs)


def test_a_killed_sweep_resumes_and_solves_only_the_rest(specs, tmp_path, dask_address):
    out = tmp_path / "rows.jsonl"
    cluster = ["--scheduler", dask_address]
    assert run("sweep", "s", "--specs", str(specs), *GRID, *cluster, "--out", str(out)).exit_code == 0
    full = read_rows(out)
    # What a killed sweep leaves: two whole rows (marked, to see they are kept, not solved again) and a torn
    # third line.
    kept = [{**row, "kept": True} for row in sorted(full, key=lambda r: r["run"])[:2]]
    torn = json.dumps(sorted(full, key=lambda r: r["run"])[2])[:40]
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept) + torn)
    result = run("sweep", "s", "--specs", str(specs), *GRID, *cluster, "--out", str(out), "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert "2 of 4 runs done already; solving the other 2" in result.stderr
    text = out.read_text()
    assert text.endswith("\n") and torn not in text.splitlines()
    rows = read_rows(out)
    assert sorted(r["run"] for r in rows) == [0, 1, 2, 3]
    assert [r for r in rows if r.get("kept")] == kept
    assert json.loads(result.stdout)["finished"] == 4
    # the same --out once more: nothing left to solve, nothing appended
    again = run("sweep", "s", "--specs", str(specs), *GRID, "--out", str(out), "-f", "json")
    assert again.exit_code == 0 and out.read_text() == text


def test_a_rerun_with_another_grid_refuses_the_file(specs, tmp_path):
    out = tmp_path / "rows.jsonl"
    out.write_text(json.dumps(a_row(0, {"chips.x.unit_usd": 1})) + "\n")
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--out", str(out))
    assert result.exit_code == EXIT_INVALID
    assert "run 0 there is not run 0 of this sweep" in result.stderr
    assert out.read_text() == json.dumps(a_row(0, {"chips.x.unit_usd": 1})) + "\n"


@pytest.mark.parametrize("stamp, said", [
    ({"scenario": "t"}, "run 0 there is of scenario 't', not 's'"),
    ({"scenario": "s", "base_inputs_digest": "0" * 64}, "run 0 there was solved on other specs"),
])
def test_a_rerun_refuses_rows_of_another_scenario_or_other_specs(specs, tmp_path, stamp, said):
    out = tmp_path / "rows.jsonl"
    row = a_row(0, {"chips.x.unit_usd": 5000, "sites.*.electricity_usd_per_kwh": 0.05}, **stamp)
    out.write_text(json.dumps(row) + "\n")
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--out", str(out))
    assert result.exit_code == EXIT_INVALID
    assert said in result.stderr and "delete the file to start over" in result.stderr
    assert out.read_text() == json.dumps(row) + "\n"


def test_samples_are_uniform_within_ranges_and_fixed_by_the_seed():
    fields = [Ranged("chips.x.unit_usd", 8000, 12000, False), Ranged("sites.a.rack_positions", 10, 20, True)]
    runs = sample_runs(fields, 200, seed=3)
    assert [r.set for r in runs] == [r.set for r in sample_runs(fields, 200, seed=3)]
    assert [r.set for r in runs] != [r.set for r in sample_runs(fields, 200, seed=4)]
    prices = [r.set["chips.x.unit_usd"] for r in runs]
    assert all(8000 <= p <= 12000 for p in prices)
    assert min(prices) < 8500 and max(prices) > 11500  # spread over the range, not bunched
    assert all(isinstance(r.set["sites.a.rack_positions"], int) for r in runs)
    assert runs[5].overrides == (
        f"chips.x.unit_usd={json.dumps(prices[5])}",
        f"sites.a.rack_positions={runs[5].set['sites.a.rack_positions']}",
    )


def test_monte_carlo_sweep_draws_the_specs_ranges(specs, tmp_path, dask_address):
    out = tmp_path / "mc.jsonl"
    result = run("sweep", "s", "--specs", str(specs), "--sample", "4", "--seed", "7", "--scheduler",
                 dask_address, "--out", str(out), "-f", "json")
    assert result.exit_code == 0, result.stderr
    rows = read_rows(out)
    assert len(rows) == 4
    for row in rows:
        assert set(row["set"]) == {"chips.x.unit_usd", "cooling.liquid.pue"}
        assert 8000 <= row["set"]["chips.x.unit_usd"] <= 12000
        assert 1.05 <= row["set"]["cooling.liquid.pue"] <= 1.6
    assert_rows_match(rows, specs)


# --- ranges in specs -------------------------------------------------------------------------------


def write(folder: Path, world: dict) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    return folder


def test_a_range_must_hold_the_value_and_stay_plausible(tmp_path):
    world = world_data()
    world["chips"]["x"]["ranges"] = {"unit_usd": [11000, 12000], "dense_tflops.fp8": [900, 2e6]}
    world["sites"]["a"]["ranges"] = {"cooling": [1, 2]}
    result = run("validate", "--specs", str(write(tmp_path / "specs", world)))
    assert result.exit_code == EXIT_INVALID
    assert re.search(r"world\.yaml:\d+:\d+: chips\.x\.ranges: ranges\.dense_tflops\.fp8 "
                     r"range \[900, 2e\+06\] leaves the plausible range 1 to 1e\+06 TFLOPS",
                     result.stderr), result.stderr
    assert "ranges.cooling is not a number field" in result.stderr
    world["chips"]["x"]["ranges"] = {"unit_usd": [11000, 12000]}
    world["sites"]["a"].pop("ranges")
    result = run("validate", "--specs", str(write(tmp_path / "specs", world)))
    assert result.exit_code == EXIT_INVALID
    assert re.search(r"world\.yaml:\d+:\d+: chips\.x\.ranges\.unit_usd: range \[11000, 12000\] must hold the "
                     r"value of unit_usd, 10000", result.stderr), result.stderr
    # a what-if may move the value out of its range
    load_specs([tmp_path / "specs"], ["chips.x.unit_usd=11500"])
    load_specs([tmp_path / "specs"], ["chips.x.unit_usd=20000"])


def test_ranges_change_no_plan_digest(tmp_path, specs):
    bare = world_data()
    for kind in bare.values():
        for entity in kind.values():
            entity.pop("ranges", None)
    plain = load_specs([write(tmp_path / "bare", bare)])
    ranged = load_specs([specs])
    assert ranged.chips["x"].ranges and not plain.chips["x"].ranges
    assert inputs_digest(ranged, "s") == inputs_digest(plain, "s")


# --- bad input: a clear message, exit 2 or 3, nothing written --------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--vary", "chips.y.unit_usd=1,2"], EXIT_INVALID,
         "--vary chips.y.unit_usd at 1: chips.y: unknown chip 'y'"),
        (["--vary", "chips.x.unit_usd=1:2e8:3"], EXIT_INVALID, "outside the plausible range 0 to 1e+07 USD"),
        (["--vary", "chips.x.unit_usd="], EXIT_USAGE, "no values (an empty grid)"),
        (["--vary", "chips.x.unit_usd=1:2:0"], EXIT_USAGE,
         "N in LOW:HIGH:N must be a whole number, at least 1"),
        (["--vary", "nope.*.x=1"], EXIT_USAGE, "unknown collection 'nope'"),
        ([], EXIT_USAGE, "nothing to sweep"),
        (["--sample", "3", "--vary", "chips.x.unit_usd=1"], EXIT_USAGE, "not both"),
        (["--vary", "chips.x.unit_usd=1,2", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"],
         EXIT_USAGE, "cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
    ],
)
def test_bad_input_fails_before_any_run(specs, tmp_path, args, code, said):
    out = tmp_path / "rows.jsonl"
    result = run("sweep", "s", "--specs", str(specs), *args, "--out", str(out))
    assert result.exit_code == code, result.stderr
    assert said in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_sample_without_ranges_is_an_empty_sweep(tmp_path):
    world = world_data()
    for kind in world.values():
        for entity in kind.values():
            entity.pop("ranges", None)
    result = run("sweep", "s", "--specs", str(write(tmp_path / "specs", world)), "--sample", "5")
    assert result.exit_code == EXIT_USAGE
    assert "the specs give no field a range" in result.stderr


def test_without_dask_sweep_says_how_to_get_it(specs, monkeypatch):
    monkeypatch.setattr("trnplan.sweep.runner.dask_available", lambda: False)
    result = run("sweep", "s", "--specs", str(specs), *GRID)
    assert result.exit_code == EXIT_USAGE
    assert 'pip install "trnplan[dask]"' in result.stderr


def test_shipped_catalog_ranges_hold_their_values():
    catalog = load_specs(["specs"] if os.path.isdir("specs") else None)
    kinds = ("chips", "switches", "cooling", "sites")
    ranged = [(k, i) for k in kinds for i, e in catalog.of(k).items() if e.ranges]
    assert {("chips", "trn3"), ("cooling", "liquid"), ("sites", "wa-remote")} <= set(ranged)
    for kind, entity_id in ranged:
        assert "range" in (catalog.of(kind)[entity_id].notes or "").lower(), (kind, entity_id)


def test_a_cancelled_wait_logs_no_traceback_and_other_errors_still_do(caplog):
    """On a loaded machine, Ctrl-C during a sweep made tornado log distributed's failed cancel of its wait
    with a traceback (seen in CI); while a sweep talks to Dask that one record is dropped, no other."""
    import logging

    from trnplan.sweep.runner import quiet_cancel

    logger = logging.getLogger("tornado.application")
    cancel = "<function sync.<locals>.cancel at 0x7f176add5620>"
    with caplog.at_level(logging.ERROR, logger="tornado.application"):
        with quiet_cancel():
            logger.error("Exception in callback functools.partial(%s)", cancel)
            logger.error("Exception in callback functools.partial(<function other at 0x1>)")
        logger.error("Exception in callback functools.partial(%s)", cancel)  # outside a sweep: kept
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "Exception in callback functools.partial(<function other at 0x1>)",
        f"Exception in callback functools.partial({cancel})",
    ]


def test_a_local_workers_heartbeat_to_a_closed_scheduler_logs_nothing_and_other_errors_still_do(caplog):
    """Ctrl-C on a loaded machine closed the local scheduler while a worker's heartbeat was on its way: the
    worker logged "Failed to communicate with scheduler during heartbeat." with a traceback (seen in CI).
    Each local worker drops that one record (`quiet_worker_heartbeat`, run on it by `Client.run`)."""
    import logging

    from trnplan.sweep.runner import quiet_worker_heartbeat

    logger = logging.getLogger("distributed.worker")
    before = list(logger.filters)
    try:
        quiet_worker_heartbeat()
        with caplog.at_level(logging.ERROR, logger="distributed.worker"):
            logger.error("Failed to communicate with scheduler during heartbeat.")
            logger.error("Unexpected exception during heartbeat. Closing worker.")
            logger.error("Compute Failed")
    finally:
        logger.filters[:] = before
    assert [r.getMessage() for r in caplog.records] == [
        "Unexpected exception during heartbeat. Closing worker.", "Compute Failed"]


@TERMINAL
def test_ctrl_c_keeps_every_finished_row_and_exits_130(specs, tmp_path):
    """Ctrl-C in a terminal signals the whole process group (the workers too): the sweep stops, every row
    written is whole, no worker prints a traceback, and a rerun finishes the rest."""
    import signal

    out = tmp_path / "rows.jsonl"
    args = [str(BIN / "trnplan"), "sweep", "s", "--specs", str(specs),
            "--vary", "chips.x.unit_usd=5000:15000:400", "--workers", "2", "--out", str(out)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "NO_COLOR": "1"})
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and (not out.exists() or out.read_text().count("\n") < 3):
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert re.search(r"interrupted: \d+ of 400 runs done; the rows are in .*rows\.jsonl", stderr), stderr
    text = out.read_text()
    assert text.endswith("\n")
    rows = read_rows(out)
    assert 3 <= len(rows) < 400 and len({r["run"] for r in rows}) == len(rows)


def test_monte_carlo_draws_only_what_the_scenario_can_use():
    """trn3-100k plans Trainium3 at its three sites: the shipped ranges on other chips' prices (gb200,
    mi355x, ...) and on forms of other chips are not drawn (they would show as noise in the tornado);
    the trn3 price, the scale-out switches and every cooling type are."""
    from trnplan.sweep.grid import ranged_fields

    catalog = load_specs([str(Path(__file__).resolve().parents[1] / "specs")])
    every = {f.path for f in ranged_fields(catalog)}
    used = {f.path for f in ranged_fields(catalog, "trn3-100k")}
    assert used < every
    assert "chips.trn3.unit_usd.2025-12" in used and "chips.gb200.unit_usd" in every - used
    # trn3-100k is planned at 2026-06: the 2027-01 step of the Trainium3 price path is not read
    assert "chips.trn3.unit_usd.2027-01" in every - used
    assert not any(p.startswith("chips.") and not p.startswith("chips.trn3.") for p in used)
    assert any(p.startswith("cooling.") for p in used)
    scale_out = {s for s, sw in catalog.switches.items() if sw.role == "scale_out"}
    assert {p.split(".")[1] for p in used if p.startswith("switches.")} & scale_out


# --- month ranges and schedule entries ---------------------------------------------------------------


def test_month_and_schedule_entry_ranges_are_validated_with_located_messages(tmp_path):
    """A month field takes a range of months (both ends YYYY-MM, holding its value); a schedule's entry a
    range of numbers (`unit_usd.2027-01`); a range on a whole schedule names its entries instead."""
    world = world_data()
    chip = world["chips"]["x"]
    chip["available_from"] = "2026-01"
    chip["unit_usd"] = {"2026-01": 10000, "2027-01": 8000}
    chip["ranges"] = {"available_from": ["2025-10", "2026-04"], "unit_usd.2027-01": [6000, 9000]}
    folder = write(tmp_path / "specs", world)
    assert run("validate", "--specs", str(folder)).exit_code == 0
    catalog = load_specs([folder])
    fields = {f.path: f for f in ranged_fields(catalog)}
    assert fields["chips.x.available_from"].month and fields["chips.x.available_from"].low == "2025-10"
    bad = {"available_from": ["2026-02", "2026-04"], "unit_usd": [6000, 12000],
           "unit_usd.2027-02": [6000, 9000], "tdp_w": ["2026-01", "2026-02"]}
    chip["ranges"] = bad
    result = run("validate", "--specs", str(write(tmp_path / "specs", world)))
    assert result.exit_code == EXIT_INVALID
    said = result.stderr
    assert "ranges.tdp_w range [2026-01, 2026-02]: tdp_w is a number; give both ends as numbers" in said
    chip["ranges"] = {k: v for k, v in bad.items() if k != "tdp_w"}
    said = run("validate", "--specs", str(write(tmp_path / "specs", world))).stderr
    assert re.search(r"world\.yaml:\d+:\d+: chips\.x\.ranges\.available_from: range \[2026-02, 2026-04\] "
                     r"must hold the value of available_from, 2026-01", said), said
    assert re.search(r"chips\.x\.ranges\.unit_usd: unit_usd is a step schedule here; a range names one of "
                     r"its entries: unit_usd\.2026-01, unit_usd\.2027-01", said), said
    assert ("chips.x.ranges.unit_usd.2027-02: unit_usd has no entry 2027-02 (its entries: 2026-01, 2027-01)"
            in said)
    chip["ranges"] = {"available_from": ["2026-01", "2026-4"]}
    said = run("validate", "--specs", str(write(tmp_path / "specs", world))).stderr
    assert "chips.x.ranges.available_from.1: '2026-4' is not a month" in said, said
    # a what-if that makes the schedule one number leaves its entry's range alone
    chip["ranges"] = {"unit_usd.2027-01": [6000, 9000]}
    load_specs([write(tmp_path / "specs", world)], ["chips.x.unit_usd=9500"])


def test_months_are_drawn_in_whole_months_and_fixed_by_the_seed():
    fields = [Ranged("switches.u.available_from", "2026-07", "2027-04", False, True),
              Ranged("chips.x.unit_usd.2027-01", 6000, 9000, False)]
    runs = sample_runs(fields, 200, seed=3)
    assert [r.set for r in runs] == [r.set for r in sample_runs(fields, 200, seed=3)]
    months = [r.set["switches.u.available_from"] for r in runs]
    assert set(months) == {f"2026-{m:02d}" for m in range(7, 13)} | {f"2027-{m:02d}" for m in range(1, 5)}
    assert runs[0].overrides[0] == f'switches.u.available_from="{months[0]}"'
    assert all(6000 <= r.set["chips.x.unit_usd.2027-01"] <= 9000 for r in runs)


def test_a_drawn_schedule_entry_moves_only_that_entry():
    """`--set chips.x.unit_usd.2027-01=V` (what a draw of the entry's range sets) keeps the other entries:
    the price path, not one flat price."""
    world = world_data()
    world["chips"]["x"]["unit_usd"] = {"2026-01": 10000, "2027-01": 8000}
    world["chips"]["x"]["ranges"] = {"unit_usd.2027-01": [6000, 9000]}
    from trnplan.testkit.builders import catalog_from_dict

    base = catalog_from_dict(world)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        drawn = load_specs([write(Path(folder) / "s", world)], ["chips.x.unit_usd.2027-01=6500"])
    assert base.chips["x"].schedules["unit_usd"] == {"2026-01": 10000, "2027-01": 8000}
    assert drawn.chips["x"].schedules["unit_usd"] == {"2026-01": 10000, "2027-01": 6500}
