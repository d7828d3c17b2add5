"""The report and the PR comment's Mermaid chart in a real headless browser (Debian's chromium), driven
through the Chrome DevTools protocol over `--remote-debugging-pipe` (no client library: the pipe carries
NUL-terminated JSON messages on file descriptors 3 and 4).

Each shipped plan's report is loaded from its file with the network watched: no console error, no request
leaving the file, the floor plans' rack cells adding up to the plan's compute plus network racks, and a
screenshot at a normal and at a narrow width (kept under TRNPLAN_SCREENSHOTS=DIR when set). The Mermaid
block of a PR comment is rendered by a bundled mermaid (TRNPLAN_MERMAID_JS=path/to/mermaid.min.js; .ci/run
fetches a pinned one) into an SVG without a parse error.

Skipped only when chromium, matplotlib (the `report` extra) or, for Mermaid, the bundled file is missing;
.ci/run installs all three and sets TRNPLAN_REQUIRE_BROWSER=1, under which a missing one fails instead.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from plan_pairs import golden_pair

from trnplan.diff import diff_plans, diff_to_markdown
from trnplan.plan.file import read_plan
from trnplan.plan.model import Plan

ROOT = Path(__file__).resolve().parent.parent
PLANS = sorted((ROOT / "plans").glob("*.yaml"))
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--remote-debugging-pipe", "--disable-extensions", "--mute-audio", "--hide-scrollbars"]
WIDTHS = {"normal": 1280, "narrow": 420}
TIMEOUT_S = 60.0

REQUIRED = bool(os.environ.get("TRNPLAN_REQUIRE_BROWSER"))
MERMAID_JS = os.environ.get("TRNPLAN_MERMAID_JS", "")

needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="no chromium here (.ci/run installs it)")
if not REQUIRED:
    pytest.importorskip("matplotlib", reason='the report needs the extra: pip install "trnplan[report]"')


def test_everything_is_here_when_required() -> None:
    """Under .ci/run (TRNPLAN_REQUIRE_BROWSER=1) nothing below may skip."""
    if not REQUIRED:
        pytest.skip("TRNPLAN_REQUIRE_BROWSER is not set")
    import matplotlib  # noqa: F401  (the report extra)

    assert CHROMIUM is not None, "no chromium or chromium-browser on PATH"
    assert MERMAID_JS and Path(MERMAID_JS).is_file(), f"TRNPLAN_MERMAID_JS={MERMAID_JS!r} is not a file"


def _onto_3_and_4(read_fd: int, write_fd: int) -> None:
    """In the child: chromium reads commands from fd 3 and writes answers to fd 4 (copied above 9 first, so
    neither copy clobbers the other). Only these two are inherited: Python opens every other descriptor
    non-inheritable, and dup2 makes 3 and 4 inheritable."""
    import fcntl

    high_r = fcntl.fcntl(read_fd, fcntl.F_DUPFD_CLOEXEC, 10)
    high_w = fcntl.fcntl(write_fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.dup2(high_r, 3)
    os.dup2(high_w, 4)


class Browser:
    """A headless chromium and one page in it, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path) -> None:
        ours_r, theirs_w = os.pipe()  # chromium writes fd 4 -> we read
        theirs_r, ours_w = os.pipe()  # we write -> chromium reads fd 3
        self.proc = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=lambda: _onto_3_and_4(theirs_r, theirs_w),
        )
        os.close(theirs_r)
        os.close(theirs_w)
        self._in = os.fdopen(ours_r, "rb", buffering=0)
        self._out = os.fdopen(ours_w, "wb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = self._in.read(1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(text))

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its answer, keeping the events that arrive meanwhile."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._out.write(json.dumps(message).encode() + b"\0")
        while True:
            got = self._message()
            if got.get("id") == self._next_id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return dict(got.get("result", {}))
            self.events.append(got)

    def wait_for(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        seen = len(self.events)
        while time.monotonic() < deadline:
            for event in self.events[seen:]:
                if event.get("method") == method:
                    return event
            seen = len(self.events)
            self.events.append(self._message())
        raise TimeoutError(method)

    def open(self, url: str, width: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=900,
                  deviceScaleFactor=1, mobile=False)
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str, wait: bool = False) -> Any:
        got = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                        awaitPromise=wait)
        if "exceptionDetails" in got:
            raise AssertionError(f"{expression[:60]}: {got['exceptionDetails']}")
        return got["result"].get("value")

    def screenshot(self) -> bytes:
        size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 12000), "scale": 1}
        shot = self.call("Page.captureScreenshot", session=True, format="png", clip=clip,
                         captureBeyondViewport=True)
        return base64.b64decode(shot["data"])

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and log entries at error level since the page opened."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(str(p.get("exceptionDetails", {}).get("text")))
            elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(str(p["entry"].get("text")))
        return out

    def requests(self) -> list[str]:
        sent = [e for e in self.events if e.get("method") == "Network.requestWillBeSent"]
        return [e["params"]["request"]["url"] for e in sent]

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._in.close()
        self._out.close()


@pytest.fixture(scope="module")
def browser() -> Any:
    if CHROMIUM is None:
        pytest.skip("no chromium here (.ci/run installs it)")
    with tempfile.TemporaryDirectory(prefix="trnplan-chromium-") as profile:
        b = Browser(Path(profile))
        try:
            yield b
        finally:
            b.close()


def _shots_dir(tmp_path: Path) -> Path:
    chosen = os.environ.get("TRNPLAN_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


RACKS_DRAWN = ("[...document.querySelectorAll('svg.floorplan rect.rack')]"
               ".reduce((n, r) => n + Number(r.dataset.racks), 0)")


@needs_browser
@pytest.mark.parametrize("plan_path", PLANS, ids=[p.stem for p in PLANS])
def test_report_in_a_browser(plan_path: Path, browser: Browser, tmp_path: Path) -> None:
    from trnplan.report import render_report

    plan = read_plan(plan_path)
    page = tmp_path / f"{plan_path.stem}.html"
    page.write_text(render_report(plan), encoding="utf-8")
    url = page.as_uri()
    for label, width in WIDTHS.items():
        browser.open(url, width)
        assert browser.errors() == []
        assert [u for u in browser.requests() if u != url] == [], "the report asked for something outside it"
        assert browser.evaluate(RACKS_DRAWN) == plan.totals.racks + (plan.totals.network_racks or 0)
        assert browser.evaluate("document.querySelectorAll('svg.floorplan').length") == len(plan.sites)
        assert browser.evaluate("document.querySelectorAll('svg.chart').length") >= 2
        # nothing wider than the window: the page reads on a phone without sideways scrolling
        assert browser.evaluate("document.documentElement.scrollWidth") <= width
        shot = browser.screenshot()
        assert shot.startswith(b"\x89PNG")
        (_shots_dir(tmp_path) / f"{plan_path.stem}-{label}.png").write_bytes(shot)


needs_mermaid = pytest.mark.skipif(
    not (MERMAID_JS and Path(MERMAID_JS).is_file()),
    reason="no bundled mermaid (set TRNPLAN_MERMAID_JS=path/to/mermaid.min.js; .ci/run fetches one)",
)


def _mermaid_blocks(markdown: str) -> list[str]:
    blocks, inside, current = [], False, []
    for line in markdown.splitlines():
        if line.strip() == "```mermaid":
            inside, current = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


def _open_mermaid(browser: Browser, tmp_path: Path) -> None:
    """A page with the bundled mermaid and an empty `#out`, open in the browser."""
    page = tmp_path / "mermaid.html"
    shutil.copy(MERMAID_JS, tmp_path / "mermaid.min.js")
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><script src="mermaid.min.js"></script>'
                    "</head><body><div id=out></div></body></html>", encoding="utf-8")
    browser.open(page.as_uri(), 900)
    browser.evaluate("mermaid.initialize({startOnLoad: false})")


def _render_mermaid(browser: Browser, block: str, name: str) -> None:
    """Render one Mermaid block into `#out`: an SVG, no parse error."""
    script = (f"mermaid.render('{name}', {json.dumps(block)})"
              ".then(r => { document.getElementById('out').innerHTML = r.svg; return r.svg; })")
    svg = browser.evaluate(script, wait=True)
    assert svg.startswith("<svg") and "Syntax error" not in svg


@needs_browser
@needs_mermaid
def test_mermaid_block_renders(browser: Browser, tmp_path: Path) -> None:
    base, head = golden_pair()
    blocks = [*_mermaid_blocks(diff_to_markdown(diff_plans(base, head))),
              *_mermaid_blocks(diff_to_markdown(diff_plans(head, base)))]  # capex up, then down
    assert len(blocks) == 2
    _open_mermaid(browser, tmp_path)
    for i, block in enumerate(blocks):
        _render_mermaid(browser, block, f"chart{i}")
        assert browser.evaluate("document.querySelectorAll('#out svg rect').length") > 0
        (_shots_dir(tmp_path) / f"mermaid-{i}.png").write_bytes(browser.screenshot())
    assert browser.errors() == []


def _phased_pair() -> tuple[Plan, Plan]:
    """Two phased plans of tests/fixtures/phased: the ramp as written, and a steeper last step."""
    from trnplan.plan.build import plan_scenario
    from trnplan.specs.load import load_specs

    specs = ["@catalog", str(Path(__file__).parent / "fixtures" / "phased")]
    base = plan_scenario(load_specs(specs), "ramp-3", alternatives=0)
    steeper = load_specs(specs, ["scenarios.ramp-3.demand.2027-01.chips=7000"])
    return base, plan_scenario(steeper, "ramp-3", alternatives=0)


@needs_browser
@needs_mermaid
def test_mermaid_mw_per_period_renders(browser: Browser, tmp_path: Path) -> None:
    """A phased diff's comment charts installed MW per period, base and head: two lines of one value per
    period, each period's `totals.it_power_kw` in MW."""
    base, head = _phased_pair()
    assert base.periods is not None and head.periods is not None
    blocks = [b for b in _mermaid_blocks(diff_to_markdown(diff_plans(base, head))) if "line [" in b]
    assert len(blocks) == 1
    lines = [line.strip() for line in blocks[0].splitlines() if line.strip().startswith("line [")]
    values = [[float(v) for v in line[len("line ["):-1].split(",")] for line in lines]
    expected = [[float(f"{p.totals.it_power_kw / 1000:.4g}") for p in plan.periods] for plan in (base, head)]
    assert values == expected
    _open_mermaid(browser, tmp_path)
    _render_mermaid(browser, blocks[0], "mw")
    assert browser.evaluate("document.querySelectorAll('#out svg path').length") >= 2
    (_shots_dir(tmp_path) / "mermaid-mw.png").write_bytes(browser.screenshot())
    assert browser.errors() == []
