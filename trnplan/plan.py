"""Plan values and their canonical file form: sorted keys, stable numbers, atomic writes."""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from trnplan.catalog import Scenario
from trnplan.costs import Deployment, Evaluation, crf, tco_per_capex_usd
from trnplan.errors import InputError

PLAN_FORMAT = "trnplan-plan/1"
MAX_PLAN_BYTES = 32 * 1024 * 1024
PLAN_MAX_DEPTH = 32
"""Plans nest about six levels deep; the limit keeps hostile files away from PyYAML's recursion limit."""


def canon(value: Any, digits: int = 6) -> Any:
    """Canonical numbers: finite, rounded to `digits` decimals, whole floats as ints, no -0."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite number in plan")
        r = round(value, digits)
        if r == 0:
            return 0
        return int(r) if r.is_integer() and abs(r) < 2**53 else r
    if isinstance(value, dict):
        return {str(k): canon(v, digits) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canon(v, digits) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} to a plan")


def usd(value: float) -> float:
    """Money to the cent."""
    return round(value + 0.0, 2)


@dataclass(frozen=True)
class Plan:
    """A solved scenario, as written to `plans/SCENARIO.yaml`."""

    scenario: str
    inputs_digest: str
    solver: dict[str, Any]
    objective: dict[str, Any]
    totals: dict[str, Any]
    sites: dict[str, dict[str, Any]]
    bom: list[dict[str, Any]]
    binding: list[str] = field(default_factory=list)
    alternatives: list[dict[str, Any]] = field(default_factory=list)
    economics: dict[str, Any] = field(default_factory=dict)
    format: str = PLAN_FORMAT

    def deployments(self) -> list[Deployment]:
        """The decisions the plan makes, sorted."""
        return sorted(
            Deployment(site, d["form"], d["cooling"], d["scale_up_switch"], int(d["units"]))
            for site, s in self.sites.items()
            for d in s["deployments"]
        )

    def scale_out(self) -> dict[str, str]:
        return {site: s["scale_out"]["switch"] for site, s in self.sites.items()}

    def to_dict(self) -> dict[str, Any]:
        data = {
            "format": self.format,
            "scenario": self.scenario,
            "inputs_digest": self.inputs_digest,
            "solver": self.solver,
            "objective": self.objective,
            "totals": self.totals,
            "sites": self.sites,
            "bom": self.bom,
            "binding": self.binding,
            "alternatives": self.alternatives,
        }
        out: dict[str, Any] = canon(data)
        # Money factors at full precision, so capex x tco_per_capex_usd reproduces the TCO to the cent.
        out["economics"] = canon(self.economics, 15)
        return dict(sorted(out.items()))

    def to_yaml(self) -> str:
        return yaml.safe_dump(
            self.to_dict(), sort_keys=True, allow_unicode=True, default_flow_style=False, width=1000
        )


def economics(scenario: Scenario) -> dict[str, Any]:
    """The scenario's money terms, so a plan alone can attribute its TCO: TCO = capex x tco_per_capex_usd
    + horizon_years x (energy + colocation) per year."""
    return {
        "horizon_years": scenario.horizon_years,
        "cost_of_capital": scenario.cost_of_capital,
        "crf": crf(scenario.cost_of_capital, scenario.horizon_years),
        "maintenance_rate": scenario.maintenance_rate,
        "utilization": scenario.utilization,
        "tco_per_capex_usd": tco_per_capex_usd(scenario),
    }


MAX_PLAN_USD = 1e13
"""Largest capex or TCO a plan may state. Money is kept to the cent in binary floating point, which is
exact to about 9e13 USD; and a ten-trillion-dollar deployment is a unit slip, not a plan."""


def check_money_range(evaluation: Evaluation) -> None:
    """Refuse a plan whose capex or TCO is beyond MAX_PLAN_USD (InputError, exit 3): each spec value can be
    plausible while their product is not (100 million chips at 10 million USD), and past it the plan's
    BOM no longer adds up to its capex to the cent. The largest BOM line points at the likely slip."""
    key = max(("capex_usd", "tco_usd"), key=lambda k: abs(evaluation.totals[k]))
    value = evaluation.totals[key]
    if abs(value) <= MAX_PLAN_USD:
        return
    what = "capex" if key == "capex_usd" else "TCO"
    hint = ""
    if evaluation.bom:
        top = max(evaluation.bom, key=lambda line: abs(line.extended_usd))
        hint = (
            f"; its largest BOM line is {top.site}: {top.item} ({top.category}), "
            f"{top.quantity:,.6g} x ${top.unit_usd:,.6g} = ${top.extended_usd:.3g}"
        )
    raise InputError(
        f"the best plan's {what} is ${value:.3g}, beyond the ${MAX_PLAN_USD:.0e} a plan can account for to "
        f"the cent: a spec value is likely in the wrong unit, or the demand too large{hint}"
    )


def plan_body(
    evaluation: Evaluation,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Totals, per-site sections and BOM lines of a plan, from the cost model's evaluation."""
    check_money_range(evaluation)
    totals = dict(evaluation.totals)
    for key in (
        "capex_usd",
        "opex_usd_per_year",
        "energy_usd_per_year",
        "colocation_usd_per_year",
        "maintenance_usd_per_year",
        "tco_usd",
    ):
        totals[key] = usd(totals[key])
    sites: dict[str, dict[str, Any]] = {}
    for site_id, s in evaluation.sites.items():
        fab = s.fabric
        assert fab is not None
        sites[site_id] = {
            "cooling_used": s.cooling_used,
            "scale_out": {
                "switch": fab.switch,
                "tiers": fab.tiers,
                "ports": fab.ports,
                "switches": fab.switches,
                "optics": fab.optics,
                "network_racks": fab.network_racks,
                "it_power_kw": fab.it_power_kw,
                "capex_usd": usd(s.fabric_capex_usd),
            },
            "deployments": [
                {
                    "form": f.deployment.form,
                    "cooling": f.deployment.cooling,
                    "scale_up_switch": f.deployment.scale_up_switch,
                    "units": f.deployment.units,
                    "racks": f.racks,
                    "chips": f.chips,
                    "domains": f.domains,
                    "fp8_pflops": f.fp8_pflops,
                    "it_power_kw": f.it_power_kw,
                    "capex_usd": usd(f.capex_usd),
                }
                for f in s.deployments
            ],
            "racks": s.compute_racks,
            "it_power_kw": s.it_power_kw,
            "facility_power_kw": s.facility_power_kw,
            "capex_usd": usd(s.capex_usd),
            "opex_usd_per_year": usd(s.opex_usd_per_year),
            "energy_usd_per_year": usd(s.energy_usd_per_year),
            "colocation_usd_per_year": usd(s.colocation_usd_per_year),
            "utilization": s.utilization,
        }
    # The plan keeps each line's figures; shares of capex belong to the BOM report.
    bom = [
        {key: value for key, value in asdict(line).items() if key != "share" and value is not None}
        for line in evaluation.bom
    ]
    return totals, sites, bom


# --- reading -------------------------------------------------------------------------------------


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class _DeploymentFile(_Loose):
    form: str
    cooling: str
    scale_up_switch: str
    units: int


class _ScaleOutFile(_Loose):
    switch: str


class _SiteFile(_Loose):
    scale_out: _ScaleOutFile
    deployments: list[_DeploymentFile]


class _TotalsFile(_Loose):
    chips: float
    units: float
    racks: float
    fp8_pflops: float
    it_power_kw: float
    facility_power_kw: float
    capex_usd: float
    opex_usd_per_year: float
    tco_usd: float
    usd_per_chip_hour: float
    usd_per_pflop_hour: float


class _PlanFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str
    scenario: str
    inputs_digest: str
    solver: dict[str, Any]
    objective: dict[str, Any]
    totals: _TotalsFile
    sites: dict[str, _SiteFile]
    bom: list[dict[str, Any]]
    binding: list[str] = []
    alternatives: list[dict[str, Any]] = []
    economics: dict[str, float] = {}


def plan_from_dict(data: Any, source: str = "<plan>") -> Plan:
    """Validate a plan file's data; raise InputError with the reason if it is not a plan."""
    if not isinstance(data, dict) or "format" not in data:
        raise InputError(
            f"{source}: not a trnplan plan file, or a truncated one (no 'format: {PLAN_FORMAT}' key)"
        )
    fmt = data.get("format")
    if fmt != PLAN_FORMAT:
        if isinstance(fmt, str) and fmt.startswith("trnplan-plan/"):
            raise InputError(
                f"{source}: plan format '{fmt}' is not readable by this trnplan (it reads {PLAN_FORMAT})"
            )
        raise InputError(f"{source}: not a trnplan plan file (format {fmt!r})")
    try:
        checked = _PlanFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[:5]
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in first)
        raise InputError(f"{source}: malformed or truncated plan file: {details}") from None
    inconsistent = self_check(data)
    if inconsistent:
        raise InputError(
            f"{source}: plan file does not add up (edited or damaged?): " + "; ".join(inconsistent)
        )
    return Plan(
        scenario=checked.scenario,
        inputs_digest=checked.inputs_digest,
        solver=data["solver"],
        objective=data["objective"],
        totals=data["totals"],
        sites=data["sites"],
        bom=data["bom"],
        binding=data.get("binding", []),
        alternatives=data.get("alternatives", []),
        economics=data.get("economics", {}),
        format=fmt,
    )


def self_check(data: dict[str, Any]) -> list[str]:
    """What a plan states about itself that does not hold: BOM = capex to the cent, TCO = capex x
    tco_per_capex_usd + horizon x (energy + colocation), and the per-hour figures from the TCO."""
    totals, economics = data["totals"], data.get("economics") or {}
    problems = []
    try:
        bom_cents = sum(round(float(line["extended_usd"]) * 100) for line in data["bom"])
    except (KeyError, TypeError, ValueError):
        return ["a BOM line has no numeric extended_usd"]
    if bom_cents != round(float(totals["capex_usd"]) * 100):
        problems.append(
            f"BOM lines sum to ${bom_cents / 100:,.2f} but capex_usd is ${float(totals['capex_usd']):,.2f}"
        )
    years = economics.get("horizon_years")
    per_capex = economics.get("tco_per_capex_usd")
    tco = float(totals["tco_usd"])
    if (
        years
        and per_capex is not None
        and "energy_usd_per_year" in totals
        and "colocation_usd_per_year" in totals
    ):
        expected = float(totals["capex_usd"]) * float(per_capex) + float(years) * (
            float(totals["energy_usd_per_year"]) + float(totals["colocation_usd_per_year"])
        )
        if abs(tco - expected) > 1.0 + 1e-9 * abs(tco):
            problems.append(f"tco_usd is ${tco:,.2f} but capex and opex give ${expected:,.2f}")
    if years:
        hours = 8760 * float(years)
        for key, per in (("usd_per_pflop_hour", "fp8_pflops"), ("usd_per_chip_hour", "chips")):
            amount = float(totals.get(per) or 0)
            if key in totals and amount > 0:
                expected = tco / (amount * hours)
                if not math.isclose(float(totals[key]), expected, rel_tol=1e-5, abs_tol=2e-6):
                    problems.append(f"{key} is {totals[key]} but the TCO gives {expected:.6f}")
    return problems


class _PlanLoader(yaml.SafeLoader):
    """SafeLoader for plan files, which trnplan writes about six levels deep and without aliases: an alias
    (a possible alias bomb, which later code would walk 9^9 times) or nesting deeper than
    PLAN_MAX_DEPTH (which would exhaust the recursive composer) is refused before anything is built."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            message = "an alias (*name); plans written by trnplan have none"
            raise yaml.composer.ComposerError(None, None, message, mark)
        self._depth += 1
        try:
            if self._depth > PLAN_MAX_DEPTH:
                mark = self.peek_event().start_mark
                message = f"nesting deeper than {PLAN_MAX_DEPTH} levels"
                raise yaml.composer.ComposerError(None, None, message, mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse_plan(text: str, source: str = "<plan>") -> Plan:
    """Read and validate a plan file's text; anything else raises InputError naming `source`."""
    loader = None
    try:
        loader = _PlanLoader(text)  # refuses control characters as it starts reading
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InputError(f"{where}: not a readable plan file (YAML: {exc.problem})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not a readable plan file ({exc})") from None
    finally:
        if loader is not None:
            loader.dispose()
    return plan_from_dict(data, source)


def read_plan(path: str | Path) -> Plan:
    """Read and validate a plan file."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_PLAN_BYTES:
            raise InputError(f"{p}: {p.stat().st_size} bytes is too large for a plan file")
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such plan file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not a plan file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read plan file: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a plan file (not UTF-8 text)") from None
    return parse_plan(text, str(p))


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `path` so that it holds the old text or the new, never a part: write a temporary file in the
    same folder, flush and fsync it, rename it over `path` (atomic), then fsync the folder.

    The temporary file is `.NAME.PID.XXXXXX.tmp`. A process killed mid-write (SIGKILL, power loss) may
    leave one behind, hidden and never read as a spec or plan; the next write of the same file removes
    those whose writer is gone (or that are over an hour old), so stray files do not pile up.
    """
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {_blocked(p) or exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            # mkstemp makes 0600 files: keep the mode of the file replaced, else what the umask allows.
            try:
                mode = p.stat().st_mode & 0o7777
            except OSError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)  # by name: os.fchmod is POSIX-only before Python 3.13
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            what = "is a folder" if p.is_dir() else exc.strerror or exc
            raise InputError(f"{p}: cannot write: {what}") from None
        raise
    _fsync_dir(p.parent)
    _remove_stale_temps(p)


def check_writable(path: str | Path) -> None:
    """Raise the InputError `write_text_atomic` would, early, when a file stands where `path`'s folder
    should be or `path` is a folder: a plan that took minutes to solve then fails at once instead."""
    p = Path(path)
    blocked = _blocked(p)
    if blocked or p.is_dir():
        raise InputError(f"{p}: cannot write: {blocked or 'is a folder'}")


def _blocked(p: Path) -> str | None:
    """'plans is a file, not a folder' when a file stands where `p`'s folder should be."""
    for parent in p.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else f"{parent} is a file, not a folder"
    return None


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


STALE_TEMP_SECONDS = 3600


def _remove_stale_temps(p: Path) -> None:
    """Remove `.NAME.PID.*.tmp` left by writers of `p` that were killed: their PID is gone, or the file is
    over an hour old (another host's writer, a PID since reused, a name without a PID)."""
    import glob
    import time

    now = time.time()
    for stale in p.parent.glob(f".{glob.escape(p.name)}.*.tmp"):
        pid = stale.name[len(p.name) + 2 :].split(".", 1)[0]
        try:
            if now - stale.stat().st_mtime > STALE_TEMP_SECONDS or (pid.isdigit() and not _alive(int(pid))):
                stale.unlink()
        except OSError:
            continue


def _alive(pid: int) -> bool:
    """Whether process `pid` exists on this host (outside POSIX, assume it does: only the age counts)."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by another user
    return True


def write_plan(plan: Plan, path: str | Path) -> None:
    write_text_atomic(path, plan.to_yaml())
