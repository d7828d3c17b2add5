"""`trnplan sweep` and `trnplan report --sweep` against hostile rows, files, sizes and endpoints: odd numbers
in rows, a file at `--out` that is not a sweep's, a link swapped in while the cluster starts, forged rows
resumed, YAML 1.1 numbers in `--vary`, sweeps too large to build, schedulers that are not Dask's (a fake
server on 127.0.0.1 that never answers, one that speaks HTTP, crafted frames, other schemes, no workers),
and runs whose worker dies. Each is refused with a located message and a documented exit code, or goes on
without the bad part; nothing is clobbered.

The world is the builders' tiny one (chip x, forms air8/liq16, scenario s: 64 chips) with a second site b,
as in test_sweep.py.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run

from trnplan.errors import EXIT_INVALID, EXIT_SOLVER, EXIT_USAGE, UsageError
from trnplan.plan.file import read_plan
from trnplan.specs.load import load_specs
from trnplan.sweep.grid import Ranged, parse_vary, sample_runs
from trnplan.sweep.rows import MAX_RUNS
from trnplan.testkit.builders import base_specs

distributed = pytest.importorskip("distributed")

GRID = ["--vary", "chips.x.unit_usd=5000,15000", "--vary", "sites.*.electricity_usd_per_kwh=0.05:0.2:2"]
PLAN = REPO / "plans" / "trn3-100k.yaml"


def world_data() -> dict:
    world = base_specs()
    world["sites"]["b"] = {**world["sites"]["a"], "electricity_usd_per_kwh": 0.3, "cooling": ["air"]}
    world["scenarios"]["s"]["sites"] = ["a", "b"]
    world["chips"]["x"]["ranges"] = {"unit_usd": [8000, 12000]}
    return world


@pytest.fixture()
def specs(tmp_path: Path) -> Path:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "world.yaml").write_text(yaml.safe_dump(world_data(), sort_keys=False))
    return folder


def a_row(number: int, values: dict, **extra: object) -> dict:
    """A row as a sweep writes one (an optimal run's figures made up)."""
    return {"run": number, "set": values, "status": "optimal", "tco_usd": 1e9 + number, "capex_usd": 5e8,
            "objective": 1e9 + number, "choices": {"ind-new": ["f/liquid/ualink-200g/th6"]}, **extra}


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def assert_clean(result_text: str) -> None:
    assert "Traceback" not in result_text and "internal error" not in result_text, result_text


# --- 5. report --sweep on odd numbers -------------------------------------------------------------


def report(rows: Path, out: Path):
    return run("report", str(PLAN), "--sweep", str(rows), "--out", str(out))


@pytest.mark.parametrize("odd", [None, "text", True], ids=["null", "text", "bool"])
def test_report_takes_set_values_mixing_numbers_with_null_text_or_booleans(odd, tmp_path):
    """Draws (not a grid) where one input is a number in some runs and null (or text, true) in others: the
    tornado orders only inputs that are numbers in every run (TypeError before)."""
    rows = [a_row(n, {"chips.trn3.unit_usd": 5000 + 397 * n, "sites.*.it_power_mw": odd if n % 3 else 40 + n})
            for n in range(12)]
    out = tmp_path / "r.html"
    result = report(write_rows(tmp_path / "runs.jsonl", rows), out)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "<!-- chips.trn3.unit_usd -->" in page and "<!-- sites.*.it_power_mw -->" not in page


@pytest.mark.parametrize("field, value", [
    ("tco_usd", 1e308), ("objective", 1.7e308), ("objective", -1.7e308), ("capex_usd", 2e15),
])
def test_report_refuses_figures_beyond_what_a_plan_holds(field, value, tmp_path):
    """1e308 in two rows overflowed the mean (OverflowError); +-1.7e308 made the histogram's bins
    overflow ("Too many bins"). A row's figures stay within 1e15, as a plan's do."""
    rows = [a_row(n, {"chips.trn3.unit_usd": 5000 + n}) for n in range(4)]
    rows[1][field] = rows[2][field] = value
    out = tmp_path / "r.html"
    result = report(write_rows(tmp_path / "runs.jsonl", rows), out)
    assert result.exit_code == EXIT_INVALID, result.output
    assert f"runs.jsonl:2:1: run 1: {field} is not a finite number within 1e+15" in result.output
    assert not out.exists()


def test_report_refuses_a_row_with_more_choices_than_a_run_makes(tmp_path):
    """One row with 20,000 choices took 470 s and 1 GB (a bar each): refused at its line."""
    rows = [a_row(0, {"chips.trn3.unit_usd": 5000}),
            a_row(1, {"chips.trn3.unit_usd": 6000},
                  choices={"ind-new": [f"f{i}/l/u/s" for i in range(20_000)]})]
    out = tmp_path / "r.html"
    result = report(write_rows(tmp_path / "runs.jsonl", rows), out)
    assert result.exit_code == EXIT_INVALID, result.output
    assert "runs.jsonl:2:1: run 1: choices holds over 10,000 choices" in result.output
    assert not out.exists()


def test_report_draws_a_bounded_number_of_bars(tmp_path):
    """Many distinct choices and inputs over the runs (each row within its caps): the charts draw the 30
    most made choices and the 30 highest ranked inputs, and say how many more there are."""
    rows = []
    for n in range(80):
        values = {f"chips.c{i}.unit_usd": 1000 + ((n * (i + 3)) % 17) for i in range(40)}
        rows.append(a_row(n, values, tco_usd=1e9 + 1e6 * (n % 7), objective=1e9 + 1e6 * (n % 7),
                          choices={"ind-new": [f"f{n}/liquid/ualink-200g/th6", f"g{n % 5}/air/pcie/th6"]}))
    out = tmp_path / "r.html"
    result = report(write_rows(tmp_path / "runs.jsonl", rows), out)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert page.count("<!-- ind-new: ") == 30
    assert "55 more choices not shown" in page  # 80 + 5 distinct, 30 drawn
    assert "10 more inputs (the lowest ranked) not shown" in page


# --- 6. and 7. --out: not a sweep's file, too large, a link swapped in ----------------------------


def test_sweep_out_refuses_a_file_that_is_not_a_sweeps(specs, tmp_path, dask_address):
    """A file with no final line break used to count whole as a torn last row and be replaced."""
    config = tmp_path / "config.json"
    config.write_text('{"api_key": "s3cret"}')
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address,
                 "--out", str(config))
    assert result.exit_code == EXIT_INVALID, result.stderr
    assert "config.json:1:1: the last line has no line break and is not the start of a row of this sweep" \
        in result.stderr
    assert config.read_text() == '{"api_key": "s3cret"}'


def test_sweep_out_refuses_a_file_over_the_cap_without_reading_it(specs, tmp_path, dask_address):
    """A 2.5 GB sparse --out was read whole (2.6 GB), then cut to nothing; over 256 MiB is refused at once."""
    big = tmp_path / "big.jsonl"
    with big.open("wb") as f:
        f.truncate(300 * 2**20)
    tracemalloc.start()
    try:
        result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address,
                     "--out", str(big))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == EXIT_INVALID, result.stderr
    assert "big.jsonl: the sweep file is over 256 MiB" in result.stderr
    assert big.stat().st_size == 300 * 2**20
    assert peak < 64 * 2**20


@contextmanager
def swapped_while_starting(monkeypatch, dask_address: str, swap: Callable[[], None]) -> Iterator[None]:
    """The sweep's cluster (the session's) starts only after `swap` ran: what a race between the sweep's
    checks of --out and its first row would see."""
    from trnplan.sweep import runner

    real = runner.cluster

    @contextmanager
    def cluster(workers, scheduler, timeout):
        swap()
        with real(workers, dask_address, 60) as client:
            yield client

    monkeypatch.setattr(runner, "cluster", cluster)
    yield


def test_a_link_swapped_in_for_out_while_the_cluster_starts_is_not_followed(specs, tmp_path, monkeypatch,
                                                                           dask_address):
    """--out was checked, then opened and cut by name after the cluster started: a link put there meanwhile
    was followed (the victim cut and written). It is opened once, without following links, and kept."""
    out, victim, moved = tmp_path / "rows.jsonl", tmp_path / "victim.txt", tmp_path / "moved.jsonl"
    victim.write_text("keep me\n")
    assert run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address, "--out", str(out)
               ).exit_code == 0
    rows = out.read_text().splitlines(keepends=True)
    out.write_text("".join(rows[:2]) + rows[2][:30])  # two rows and a torn third: two runs to solve

    def swap() -> None:
        out.rename(moved)
        out.symlink_to(victim)

    with swapped_while_starting(monkeypatch, dask_address, swap):
        result = run("sweep", "s", "--specs", str(specs), *GRID, "--out", str(out), "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert victim.read_text() == "keep me\n"
    assert sorted(json.loads(line)["run"] for line in moved.read_text().splitlines()) == [0, 1, 2, 3]


def test_a_link_put_where_a_new_out_will_be_is_not_followed(specs, tmp_path, monkeypatch, dask_address):
    out, victim = tmp_path / "rows.jsonl", tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    with swapped_while_starting(monkeypatch, dask_address, lambda: out.symlink_to(victim)):
        result = run("sweep", "s", "--specs", str(specs), *GRID, "--out", str(out))
    assert result.exit_code == EXIT_INVALID, result.stderr
    assert "a file appeared there while the sweep started" in result.stderr
    assert victim.read_text() == "keep me\n" and out.is_symlink()


# --- 8. resume reads rows through the same checks --------------------------------------------------

SET0 = {"chips.x.unit_usd": 5000, "sites.*.electricity_usd_per_kwh": 0.05}


@pytest.mark.parametrize("edit, said", [
    ({"tco_usd": "abc"}, "run 0: tco_usd is not a finite number"),
    ({"status": None}, "run 0: no status"),
    ({"choices": [1]}, "run 0: choices is not {SITE: [CHOICE, ...]}"),
    ({"objective": "x"}, "run 0: objective is not a finite number"),
    ({"tco_usd": None}, "run 0: a solved run without tco_usd"),
    ({"tco_usd": 1e308}, "run 0: tco_usd is not a finite number within 1e+15"),
    ({"choices": {"a": "xyz"}}, "run 0: choices is not {SITE: [CHOICE, ...]}"),
    ({"status": "done"}, "run 0: status 'done' is not one of"),
    ({"run": -1}, "run -1 is not a run number (0 to 99,999)"),
], ids=["tco-text", "no-status", "choices-list", "objective-text", "tco-null", "tco-huge", "choices-text",
        "status-other", "run-negative"])
def test_resume_refuses_forged_rows_before_solving(specs, tmp_path, dask_address, edit, said):
    """Forged rows gave internal errors (or, `choices: {"a": "xyz"}`, three choices x, y, z) on resume."""
    out = tmp_path / "rows.jsonl"
    row = {k: v for k, v in {**a_row(0, SET0), **edit}.items() if v is not None or k != "status"}
    write_rows(out, [row])
    before = out.read_text()
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address, "--out", str(out))
    assert result.exit_code == EXIT_INVALID, result.stderr
    assert f"rows.jsonl:1:1: {said}" in result.stderr, result.stderr
    assert "is this the --out of a trnplan sweep?" in result.stderr
    assert out.read_text() == before


# --- 9. --vary reads numbers as --set does ----------------------------------------------------------


def test_vary_reads_yaml_1_2_numbers_as_set_does(specs):
    """`0700` was 448 (YAML 1.1 octal); --set reads 700."""
    catalog = load_specs([specs])
    axis = parse_vary("sites.a.rack_positions=0700,1_000,0x384,0o700,900", catalog)
    assert axis.values == (700, 1000, 900, 448, 900)
    assert load_specs([specs], ["sites.a.rack_positions=0700"]).sites["a"].rack_positions == 700
    with pytest.raises(UsageError, match="is not one value"):
        parse_vary("sites.a.rack_positions=[1]", catalog)
    with pytest.raises(UsageError, match="'\\[1': YAML syntax"):
        parse_vary("sites.a.rack_positions=[1", catalog)


# --- 10. sizes checked before anything is built --------------------------------------------------


def test_sweep_sizes_are_checked_before_building_and_runs_made_as_needed(specs):
    """`--vary X=15000:25000:100000000` built its list first (6.5 GB); `--sample 1000000` built every run
    (6.7 GB). N past MAX_RUNS is refused before any value is made; a sample of MAX_RUNS takes no memory
    for runs not yet reached."""
    catalog = load_specs([specs])
    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match="more than the 100,000 runs a sweep may have"):
            parse_vary("chips.x.unit_usd=15000:25000:5000000", catalog)
        runs = sample_runs([Ranged("chips.x.unit_usd", 8000, 12000, False)], MAX_RUNS, seed=1)
        last = runs[MAX_RUNS - 1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(runs) == MAX_RUNS and last.run == MAX_RUNS - 1
    assert peak < 4 * 2**20
    with pytest.raises(UsageError, match="--sample N must be 1 to 100,000, got 1,000,000"):
        sample_runs([Ranged("chips.x.unit_usd", 8000, 12000, False)], 1_000_000, seed=1)
    result = run("sweep", "s", "--specs", str(specs), "--vary", "chips.x.unit_usd=1:2:400",
                 "--vary", "sites.*.electricity_usd_per_kwh=0.05:0.2:400")
    assert result.exit_code == EXIT_USAGE and "the grid has 160,000 runs, more than 100,000" in result.stderr


def test_runs_are_handed_to_the_cluster_a_few_at_a_time(specs, dask_address):
    """solve_all takes tasks as workers free up (a few per thread ahead), not all at once."""
    from trnplan.sweep.grid import grid_runs
    from trnplan.sweep.runner import IN_FLIGHT, Task, solve_all

    catalog = load_specs([specs])
    runs = grid_runs([parse_vary("chips.x.unit_usd=5000:15000:24", catalog)])
    taken = 0
    ahead: list[int] = []

    def tasks():
        nonlocal taken
        for r in runs:
            taken += 1
            yield Task("s", (str(specs),), (), r)

    with distributed.Client(dask_address, timeout=60) as client:
        threads = sum(client.nthreads().values())
        failed = solve_all(client, tasks(), lambda row: ahead.append(taken - len(ahead) - 1))
    assert failed == 0 and len(ahead) == 24
    assert max(ahead) <= IN_FLIGHT * threads


# --- 11. --scheduler at endpoints that are not Dask's ------------------------------------------------


@contextmanager
def fake_server(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A TCP server on 127.0.0.1 that runs `answer` on each connection (and then holds it open until the
    test ends): its address as tcp://127.0.0.1:PORT."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            try:
                answer(conn)
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def silent(conn: socket.socket) -> None:
    """Accept and never answer."""


def http(conn: socket.socket) -> None:
    """Answer whatever comes as a web server answers a request it cannot read."""
    conn.settimeout(2)
    try:
        conn.recv(4096)
    except OSError:
        pass
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\n"
                 b"Bad Request")


def crafted(conn: socket.socket) -> None:
    """A frame of the right length holding garbage."""
    conn.sendall(struct.pack("<Q", 24) + struct.pack("<Q", 1) + struct.pack("<Q", 8) + b"\xc1" * 8)


def sweep_at(specs: Path, address: str, timeout: float = 1) -> subprocess.CompletedProcess[str]:
    """`trnplan sweep` at `address` in a process of its own, given 120 s to end (a hang fails the test)."""
    args = [sys.executable, "-m", "trnplan", "sweep", "s", "--specs", str(specs), "--vary",
            "chips.x.unit_usd=5000,6000", "--scheduler", address, "--connect-timeout", str(timeout)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120"})


@pytest.mark.parametrize("answer, said", [
    (silent, "no Dask answer within 1 s (--connect-timeout); is it a Dask scheduler's address?"),
    (http, "is it a Dask scheduler's address"),
    (crafted, "is it a Dask scheduler's address"),
], ids=["never-answers", "http", "crafted-frame"])
def test_a_scheduler_address_that_is_not_dask_is_a_clear_error(specs, answer, said):
    """An HTTP server gave `MemoryError: Unable to allocate 3.07 EiB` ("HTTP/1.1" read as a frame's
    length); one that never answers hung past --connect-timeout."""
    with fake_server(answer) as address:
        result = sweep_at(specs, address)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert f"cannot reach the Dask scheduler at {address}" in result.stderr and said in result.stderr
    assert_clean(result.stderr)


@pytest.mark.parametrize("address", ["ucx://127.0.0.1:8786", "tls://127.0.0.1:8786", "ws://127.0.0.1:8786",
                                     "inproc://x", "tcp://127.0.0.1", "tcp://127.0.0.1:99999", "tcp://:80"])
def test_other_schemes_and_bad_scheduler_addresses_are_usage_errors(specs, address):
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", address)
    assert result.exit_code == EXIT_USAGE, result.stderr
    assert "--scheduler takes tcp://HOST:PORT" in result.stderr
    assert_clean(result.stderr)


def test_a_scheduler_with_no_workers_is_said_within_the_timeout(specs):
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=":0") as empty:
        result = sweep_at(specs, empty.scheduler_address)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert f"the Dask scheduler at {empty.scheduler_address} has no workers after 1 s" in result.stderr
    assert_clean(result.stderr)


# --- 12. dead workers ------------------------------------------------------------------------------


def dies_on_run_1(task):
    """A run whose worker dies each time it takes it up (an out-of-memory loop)."""
    from trnplan.sweep.runner import solve_run as real

    if task.run.run == 1:
        os._exit(1)
    return real(task)


# The workers cannot import this test module: Dask ships a function of `__main__` by value (cloudpickle).
dies_on_run_1.__module__ = "__main__"


def test_a_run_whose_worker_keeps_dying_is_failed_and_the_others_go_on(specs, tmp_path, monkeypatch,
                                                                      dask_address):
    """Its worker killed again and again (4 times by Dask's default) gave `internal error: KilledWorker` and
    cancelled the other runs."""
    from trnplan.sweep import runner

    out = tmp_path / "rows.jsonl"
    monkeypatch.setattr(runner, "solve_run", dies_on_run_1)
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address, "--out", str(out),
                 "--connect-timeout", "60", "-f", "json")
    assert result.exit_code == EXIT_SOLVER, result.stderr
    # the session's scheduler gives a task up after its worker's second death (conftest.py)
    assert "error: 1 of 4 runs failed (run 1: the worker solving it died 2 times" in result.stderr
    assert "rerun the same command to solve it again" in result.stderr
    rows = {r["run"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(rows) == [0, 1, 2, 3]
    assert rows[1]["status"] == "failed" and [rows[n]["status"] for n in (0, 2, 3)] == ["optimal"] * 3
    assert json.loads(result.stdout)["status"] == {"failed": 1, "optimal": 3}
    monkeypatch.undo()
    again = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", dask_address, "--out", str(out),
                "-f", "json")
    assert again.exit_code == 0, again.stderr
    assert "3 of 4 runs done already; solving the other 1" in again.stderr
    assert json.loads(again.stdout)["status"] == {"optimal": 4}


def test_a_local_worker_that_cannot_start_is_a_clear_error(specs, tmp_path):
    """A worker failing during start-up gave `Nanny failed to start` as an internal error."""
    import dask

    out = tmp_path / "rows.jsonl"
    with dask.config.set({"distributed.worker.preload": ["no_such_module_for_a_trnplan_test"]}):
        result = run("sweep", "s", "--specs", str(specs), *GRID, "--workers", "1", "--out", str(out))
    assert result.exit_code == EXIT_SOLVER, result.stderr
    assert "cannot start the local Dask cluster: Nanny failed to start" in result.stderr
    assert "(ModuleNotFoundError: No module named 'no_such_module_for_a_trnplan_test')" in result.stderr
    assert not out.exists()


def test_the_report_reads_failed_rows(tmp_path):
    rows = [a_row(n, {"chips.trn3.unit_usd": 5000 + n}) for n in range(4)]
    rows[2] = {**rows[2], "status": "failed", "tco_usd": None, "capex_usd": None, "objective": None,
               "choices": {}, "message": "the worker solving it died 4 times (killed, or out of memory?)"}
    out = tmp_path / "r.html"
    result = report(write_rows(tmp_path / "runs.jsonl", rows), out)
    assert result.exit_code == 0, result.output
    assert "4 of 4 runs finished (1 failed, 3 optimal)" in out.read_text(encoding="utf-8")
    assert read_plan(PLAN).scenario == "trn3-100k"
