"""How fast `trnplan bom` refuses hostile plan files: a 30 MB plan, the worst files under the caps, a FIFO and
/dev/zero. Each runs as its own `trnplan bom FILE` process; the table shows exit code, wall time and the
process's max RSS.

    /work/venv/bin/python bench/plan_read.py            # about 15 s

The 30 MB plan is plans/trn3-100k.yaml with its BOM repeated until the file is 30 MB: a file the parser
must read in full before anything can check it, which is what made it take minutes and gigabytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MB = 1000 * 1000


def plan_of_size(size: int, head: str = "") -> str:
    """plans/trn3-100k.yaml with its BOM repeated until the text is `size` bytes."""
    text = (REPO / "plans" / "trn3-100k.yaml").read_text(encoding="utf-8")
    before, rest = text.split("bom:\n", 1)
    bom, after = rest.split("economics:\n", 1)
    parts = [head, before, "bom:\n"]
    total = len(head) + len(before) + len(after) + 20
    while total + len(bom) < size:
        parts.append(bom)
        total += len(bom)
    return "".join([*parts, "economics:\n", after])


def make_cases(folder: Path) -> None:
    """Write the files (in a child process, so that the measuring parent stays small: a child's max RSS
    counts its parent's pages from before its exec)."""
    from trnplan.plan.file import MAX_PLAN_BYTES

    head = "format: trnplan-plan/1\n"
    dense = (head + "binding: [" + "1," * MAX_PLAN_BYTES)[: MAX_PLAN_BYTES - 3] + "1]\n"
    strings = head + "binding:\n" + ("- " + "x" * 999 + "\n") * (MAX_PLAN_BYTES // 1002 - 1)
    files = {
        "30 MB plan (the issue's)": plan_of_size(30 * MB),
        "plan-shaped, just under the byte cap": plan_of_size(MAX_PLAN_BYTES - 1000, head),
        "[1,1,1,...] under the byte cap": dense,
        "1,000-character strings under the byte cap": strings,
    }
    for i, (name, text) in enumerate(files.items()):
        (folder / f"case{i}.yaml").write_text(text, encoding="utf-8")
        (folder / f"case{i}.name").write_text(name, encoding="utf-8")
    os.mkfifo(folder / "case8.yaml")
    (folder / "case8.name").write_text("a FIFO", encoding="utf-8")
    os.symlink("/dev/zero", folder / "case9.yaml")
    (folder / "case9.name").write_text("plans/x.yaml -> /dev/zero", encoding="utf-8")


def run(path: Path) -> tuple[int, float, float, str]:
    """(exit code, seconds, max RSS in MB, first stderr line) of `trnplan bom PATH`."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "trnplan", "bom", str(path), "--format", "csv"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    return proc.returncode, seconds, usage.ru_maxrss / 1024, (err.splitlines() or [""])[0]


def main() -> None:
    if sys.argv[1:2] == ["--make"]:
        make_cases(Path(sys.argv[2]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, __file__, "--make", tmp], check=True)
        paths = {p.with_suffix(".name").read_text(): p for p in sorted(Path(tmp).glob("case*.yaml"))}
        print("| file | bytes | exit | s | max RSS MB | message |")
        print("|---|---:|---:|---:|---:|---|")
        for name, path in paths.items():
            size = path.stat().st_size if path.is_file() and not path.is_symlink() else 0
            code, seconds, rss, message = run(path)
            message = message.replace(str(path), "FILE")[:90]
            print(f"| {name} | {size:,} | {code} | {seconds:.2f} | {rss:.0f} | {message} |")


if __name__ == "__main__":
    main()
