"""The `trnplan` command: a thin layer that parses options, calls the library, renders, and exits.

This is the only module that uses typer. PuLP and highspy are imported only by `optimize`, inside the
command, so `--help`, `show`, `bom` and `diff` start fast.

Exit codes: 0 ok; 1 differences found (`diff --exit-code`, `--fail-if`, `optimize --check`) or an
unexpected internal error (reported in one line; set TRNPLAN_DEBUG=1 for the traceback); 2 usage;
3 invalid specs or input; 4 infeasible; 5 solver failure or time limit with no plan; 130 interrupted.
"""

import functools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from trnplan.errors import (
    EXIT_DIFFERENT,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    KINDS,
    InfeasibleError,
    InputError,
    SolverError,
    SpecError,
    TrnplanError,
    UsageError,
    did_you_mean,
)

if TYPE_CHECKING:  # the catalog pulls in pydantic: imported where a command needs it, not for --help
    from trnplan.catalog import Catalog

app = typer.Typer(
    name="trnplan",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])

# typer >= 0.20 vendors click and adds TyperException; older typer has neither.
_TYPER_EXITS: tuple[type[BaseException], ...] = tuple(
    e for e in (typer.Exit, typer.Abort, getattr(typer, "TyperException", None)) if e is not None
)


# --- shared options, defined once ------------------------------------------------------------------

SpecsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--specs",
        metavar="DIR",
        help="Spec directory; repeat to layer (later ones override earlier ones, entity by entity). "
        "Default: ./specs if it exists, else the catalog bundled with trnplan.",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="What-if override of one spec value (repeatable), e.g. --set sites.ind-new.it_power_mw=80.",
        show_default=False,
    ),
]


def _format_option() -> Any:
    """The `--format/-f` option; each command's alias below gives the formats it supports."""
    return typer.Option("--format", "-f", case_sensitive=False, help="Output format.")


class ShowFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class PlanFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class BomFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    markdown = "markdown"


class DiffFormat(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


class SolverName(StrEnum):
    highs = "highs"
    cbc = "cbc"


Kind = StrEnum("Kind", [(k, k) for k in KINDS])  # type: ignore[misc]

ShowFormatOpt = Annotated[ShowFormat, _format_option()]
PlanFormatOpt = Annotated[PlanFormat, _format_option()]
BomFormatOpt = Annotated[BomFormat, _format_option()]
DiffFormatOpt = Annotated[DiffFormat, _format_option()]


# --- errors -> exit codes -------------------------------------------------------------------------


def _echo_err(text: str) -> None:
    typer.echo(text, err=True)


@contextmanager
def _exit_codes() -> Iterator[None]:
    """Map library errors to exit codes and messages on stderr; never show a traceback to users."""
    try:
        yield
    except _TYPER_EXITS:
        raise
    except SpecError as exc:
        from trnplan.render import console, render_problems

        if exc.problems:
            console(stderr=True).print(render_problems(exc.problems), soft_wrap=True)
        else:
            _echo_err(str(exc))
        raise typer.Exit(exc.exit_code) from None
    except TrnplanError as exc:
        _echo_err(f"error: {exc}")
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        _echo_err("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except Exception as exc:
        if os.environ.get("TRNPLAN_DEBUG"):
            raise
        _echo_err(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in trnplan; please report it with the command and specs that caused it "
            "(set TRNPLAN_DEBUG=1 to see the traceback)."
        )
        raise typer.Exit(1) from None


@contextmanager
def _interrupt_after() -> Iterator[None]:
    """Hold a Ctrl-C until the block ends, then raise it. For importing PuLP: its solver probes
    (`try: import highspy ... except:`) swallow a KeyboardInterrupt, so Ctrl-C at that moment was lost,
    or left highspy half-imported ("cannot load module more than once") and the run ended in exit 5."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:  # ignored, or someone else's: leave it alone
        yield
        return
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def guarded(fn: F) -> F:
    """Run a command inside `_exit_codes`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _exit_codes():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


# --- helpers --------------------------------------------------------------------------------------


def _load(specs: list[Path] | None, overrides: list[str] | None) -> "Catalog":
    from trnplan.load import load_specs

    return load_specs(list(specs) if specs else None, list(overrides or ()))


def _emit(text: str) -> None:
    """Machine output: plain text on stdout, exactly one trailing newline."""
    typer.echo(text if text.endswith("\n") else text + "\n", nl=False)


def _to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


def _to_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, default_flow_style=False, width=1000)


def _print(renderable: Any) -> None:
    from trnplan.render import console

    console().print(renderable)


# --- commands -------------------------------------------------------------------------------------


_NOUNS = {
    "chips": ("chip", "chips"),
    "forms": ("form", "forms"),
    "switches": ("switch", "switches"),
    "cooling": ("cooling type", "cooling types"),
    "sites": ("site", "sites"),
    "scenarios": ("scenario", "scenarios"),
}


@app.command()
@guarded
def validate(specs: SpecsOpt = None, overrides: SetOpt = None) -> None:
    """Load and check every spec; report all problems as path:line:col: key.path: message.

    Exits 3 if there is any problem.

    Examples:

        trnplan validate
        trnplan validate --specs specs --specs my-overrides
    """
    catalog = _load(specs, overrides)
    counts = []
    for kind in KINDS:
        n = len(catalog.of(kind))
        counts.append(f"{n} {_NOUNS[kind][0 if n == 1 else 1]}")
    typer.echo(", ".join(counts) + ": OK")


@app.command()
@guarded
def show(
    kind: Annotated[
        Kind,
        typer.Argument(metavar="KIND", show_default=False, help="What to list: " + ", ".join(KINDS) + "."),
    ],
    fmt: ShowFormatOpt = ShowFormat.table,
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Show the catalog as a table with derived figures; estimates are marked with *.

    `forms` is the Rosetta stone of brand names, codenames and topology names, with each scale-up
    option's rack IT kW. JSON and YAML list one object per entity: id, spec fields and `derived`.

    Examples:

        trnplan show forms
        trnplan show chips --format json
    """
    from trnplan.catalog import DERIVED
    from trnplan.plan import canon

    kind_id = kind.value
    catalog = _load(specs, overrides)
    if fmt is ShowFormat.table:
        from trnplan.render import render_catalog

        _print(render_catalog(kind_id, catalog))
        return
    derive = DERIVED.get(kind_id)
    items = [
        {
            "id": entity_id,
            **entity.model_dump(mode="json"),
            "derived": derive(entity, catalog) if derive else {},
        }
        for entity_id, entity in sorted(catalog.of(kind_id).items())
    ]
    data = canon(items)
    _emit(_to_json(data) if fmt is ShowFormat.json else _to_yaml(data))


@app.command()
@guarded
def optimize(
    scenario: Annotated[
        str | None, typer.Argument(metavar="SCENARIO", help="Scenario id from the specs.", show_default=False)
    ] = None,
    all_scenarios: Annotated[
        bool, typer.Option("--all", help="Solve every scenario, in sorted order.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Re-solve and compare with the plan file on disk instead of writing it; "
            "exit 1 on any difference (CI drift check).",
        ),
    ] = False,
    plans: Annotated[
        Path, typer.Option("--plans", metavar="DIR", help="Folder of plan files.")
    ] = Path("plans"),
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Plan file to write (one scenario only).",
            show_default=False,
        ),
    ] = None,
    fmt: PlanFormatOpt = PlanFormat.table,
    alternatives: Annotated[
        int,
        typer.Option(
            "--alternatives",
            metavar="K",
            min=0,
            max=50,
            help="How many alternatives to list: the best plan without each form, cooling or switch the "
            "plan chooses, ranked.",
        ),
    ] = 3,
    solver: Annotated[
        SolverName, typer.Option("--solver", case_sensitive=False, help="MILP solver.")
    ] = SolverName.highs,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            metavar="SECONDS",
            min=0.01,
            show_default=False,
            help="Stop each solve after this long; a plan found by then is kept, marked unproven.",
        ),
    ] = None,
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Solve a scenario to proven optimality, print the plan and write plans/SCENARIO.yaml.

    With --check, nothing is written: the fresh plan is compared with the file on disk and any
    difference (or a missing file) exits 1 with a short diff. An infeasible scenario writes nothing,
    says what must give, and exits 4. With --all, every scenario is solved and the exit code is the
    highest of them.

    Examples:

        trnplan optimize trn3-100k
        trnplan optimize --all --check
    """
    if all_scenarios == (scenario is not None):
        raise UsageError("give one SCENARIO or --all")
    if out is not None and all_scenarios:
        raise UsageError("--out names one plan file; with --all, use --plans DIR")
    catalog = _load(specs, overrides)
    if all_scenarios:
        ids = sorted(catalog.scenarios)
        if not ids:
            raise UsageError("the specs define no scenarios")
    else:
        assert scenario is not None
        if scenario not in catalog.scenarios:
            hint = did_you_mean(scenario, catalog.scenarios)
            known = "" if hint else f" (known: {', '.join(sorted(catalog.scenarios)) or 'none'})"
            raise UsageError(f"unknown scenario '{scenario}'{hint}{known}")
        ids = [scenario]

    from trnplan.plan import check_writable, write_plan

    if not check:  # an unwritable plans/ fails now, not after the solve (exit 3, naming the path)
        for scenario_id in ids:
            check_writable(out if out is not None else plans / f"{scenario_id}.yaml")
    with _interrupt_after():
        from trnplan import optimize as optimizer  # lazy: the only path that imports PuLP and highspy

    codes: list[int] = []
    solved: dict[str, Any] = {}
    for scenario_id in ids:
        path = out if out is not None else plans / f"{scenario_id}.yaml"
        try:
            plan = optimizer.optimize(
                catalog, scenario_id, solver=solver.value, time_limit=time_limit, alternatives=alternatives
            )
        except InfeasibleError as exc:
            _echo_err(_infeasible_text(exc))
            _echo_err(f"no plan written for '{scenario_id}'" if not check else f"{path}: not checked")
            codes.append(exc.exit_code)
            continue
        except SolverError as exc:
            _echo_err(f"error: {exc}")
            _echo_err(f"no plan written for '{scenario_id}'" if not check else f"{path}: not checked")
            codes.append(exc.exit_code)
            continue
        if plan.solver.get("status") != "optimal":
            gap = float(plan.solver.get("mip_gap") or 0.0)
            from trnplan.render import fmt as fmt_number

            _echo_err(
                f"WARNING: '{scenario_id}': the solver stopped at the time limit; this plan is feasible but "
                f"NOT proven optimal (status {plan.solver.get('status')}, gap {fmt_number(gap, 'pct')}). "
                "Raise --time-limit to prove it."
            )
        if check:
            codes.append(_check_file(plan.to_yaml(), path, scenario_id))
            continue
        write_plan(plan, path)
        solved[scenario_id] = plan
        if fmt is PlanFormat.table:
            from trnplan.render import render_plan

            _print(render_plan(plan))
        _echo_err(f"wrote {path}")
        codes.append(EXIT_OK)

    if check and all_scenarios and plans.is_dir():
        for stale in sorted(plans.glob("*.yaml")):
            if stale.stem not in catalog.scenarios:
                typer.echo(
                    f"{stale}: no scenario '{stale.stem}' in the specs; "
                    "delete the file or restore the scenario"
                )
                codes.append(EXIT_DIFFERENT)
    if fmt is not PlanFormat.table and solved:
        if all_scenarios:
            data = {sid: p.to_dict() for sid, p in solved.items()}
            _emit(_to_json(data) if fmt is PlanFormat.json else _to_yaml(data))
        else:
            (only,) = solved.values()
            _emit(_to_json(only.to_dict()) if fmt is PlanFormat.json else only.to_yaml())
    worst = max(codes, default=EXIT_OK)
    if worst:
        raise typer.Exit(worst)


def _infeasible_text(exc: InfeasibleError) -> str:
    """The explanation as a list; an indented line is a detail of the line above it."""
    lines = [f"error: scenario '{exc.scenario}' is infeasible: no plan meets it."]
    for line in exc.explanation:
        if line[:1].isspace():
            lines.append("      " + line.strip())
        else:
            lines.append("  - " + line)
    return "\n".join(lines)


MAX_DRIFT_LINES = 60


def _solver_versions(on_disk: str, fresh: str) -> tuple[str, str] | None:
    """(old, new) solver versions when two plan texts differ in nothing else, else None."""
    import yaml

    try:
        old, new = yaml.safe_load(on_disk), yaml.safe_load(fresh)
        old_version, new_version = old["solver"].pop("version"), new["solver"].pop("version")
    except (yaml.YAMLError, KeyError, TypeError, AttributeError):
        return None
    return (str(old_version), str(new_version)) if old == new else None


def _check_file(fresh: str, path: Path, scenario_id: str) -> int:
    """Compare a freshly solved plan with the file on disk; print what drifted; 0 same, 1 drift."""
    import difflib  # only on drift

    try:
        on_disk = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        typer.echo(f"{path}: missing (drift); run `trnplan optimize {scenario_id}` and commit the plan")
        return EXIT_DIFFERENT
    except (OSError, UnicodeDecodeError):
        on_disk = None
    if on_disk == fresh:
        typer.echo(f"{path}: up to date")
        return EXIT_OK
    # What is on disk must be a plan to be compared: a corrupt, truncated, foreign or future-format file
    # is bad input (exit 3), not drift, and gets the same message `bom` and `diff` give.
    from trnplan.plan import read_plan

    try:
        read_plan(path)
    except InputError as exc:
        _echo_err(f"error: {exc}")
        _echo_err(f"{path}: not checked; fix or delete it, then run `trnplan optimize {scenario_id}`")
        return EXIT_INVALID
    assert on_disk is not None  # read_plan read it
    versions = _solver_versions(on_disk, fresh)
    if versions is not None:
        # The same plan from another build of the solver is not drift; say so and move on.
        typer.echo(f"{path}: up to date (solved here by {versions[1]}; the file records {versions[0]})")
        return EXIT_OK
    lines = list(
        difflib.unified_diff(
            on_disk.splitlines(),
            fresh.splitlines(),
            f"{path} (on disk)",
            f"{path} (fresh solve)",
            n=1,
            lineterm="",
        )
    )
    typer.echo(f"{path}: out of date (drift); run `trnplan optimize {scenario_id}` and commit the plan")
    for line in lines[:MAX_DRIFT_LINES]:
        typer.echo(line)
    if len(lines) > MAX_DRIFT_LINES:
        typer.echo(f"... {len(lines) - MAX_DRIFT_LINES} more diff lines")
    return EXIT_DIFFERENT


@app.command()
@guarded
def bom(
    plan_file: Annotated[
        Path, typer.Argument(metavar="PLAN", help="A plan file (plans/SCENARIO.yaml).", show_default=False)
    ],
    fmt: BomFormatOpt = BomFormat.table,
) -> None:
    """Bill of materials of a plan: line items by site and category; the total equals the plan's capex.

    Examples:

        trnplan bom plans/trn3-100k.yaml
        trnplan bom plans/trn3-100k.yaml --format csv > bom.csv
    """
    from trnplan.bom import bom_to_csv, bom_to_json, bom_to_markdown, build_bom
    from trnplan.plan import read_plan

    the_bom = build_bom(read_plan(plan_file))
    if round(float(the_bom.total_usd) * 100) != round(float(the_bom.capex_usd) * 100):
        _echo_err(
            f"warning: BOM lines sum to ${the_bom.total_usd:,.2f} but the plan states capex "
            f"${the_bom.capex_usd:,.2f}; was the plan file edited by hand?"
        )
    if fmt is BomFormat.table:
        from trnplan.render import render_bom

        _print(render_bom(the_bom))
    elif fmt is BomFormat.csv:
        _emit(bom_to_csv(the_bom))
    elif fmt is BomFormat.json:
        _emit(bom_to_json(the_bom))
    else:
        _emit(bom_to_markdown(the_bom))


@app.command()
@guarded
def diff(
    base: Annotated[
        str,
        typer.Argument(
            help="Base plan: a path, or REV:path read through git (main:plans/x.yaml).", show_default=False
        ),
    ],
    head: Annotated[str, typer.Argument(help="Head plan: a path, or REV:path.", show_default=False)],
    fmt: DiffFormatOpt = DiffFormat.table,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the plans differ.")] = False,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            metavar="EXPR",
            show_default=False,
            help="Guardrail (repeatable): exit 1 when it is breached, e.g. 'capex>+5%' or 'it_power>+2MW'.",
        ),
    ] = None,
) -> None:
    """What changed between two plans: totals, per-site choices, deployments, BOM lines and why.

    Markdown is made for a pull-request comment; JSON is stable for machines.

    Examples:

        trnplan diff main:plans/trn3-100k.yaml plans/trn3-100k.yaml
        trnplan diff old.yaml new.yaml --format markdown --fail-if 'capex>+5%'
    """
    from trnplan.diff import (
        breached,
        diff_plans,
        diff_to_json,
        diff_to_markdown,
        parse_guardrail,
        read_plan_ref,
    )

    guardrails = [parse_guardrail(text) for text in fail_if or ()]
    result = diff_plans(read_plan_ref(base), read_plan_ref(head), base_label=base, head_label=head)
    if fmt is DiffFormat.table:
        from trnplan.render import render_diff

        _print(render_diff(result))
    elif fmt is DiffFormat.markdown:
        _emit(diff_to_markdown(result))
    else:
        _emit(diff_to_json(result))
    breaches = breached(result, guardrails)
    for line in breaches:
        _echo_err(f"guardrail breached: {line}")
    if breaches or (exit_code and result.different):
        raise typer.Exit(EXIT_DIFFERENT)


@app.command()
@guarded
def schema(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            dir_okay=False,
            show_default=False,
            help="Write the schema to FILE instead of stdout.",
        ),
    ] = None,
) -> None:
    """JSON Schema of the spec files, for editors (yaml-language-server) and CI.

    Examples:

        trnplan schema --out trnplan.schema.json
    """
    from trnplan.schema import schema_json

    text = schema_json()
    if out is None:
        _emit(text)
        return
    from trnplan.plan import write_text_atomic

    write_text_atomic(out, text if text.endswith("\n") else text + "\n")
    _echo_err(f"wrote {out}")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"trnplan {version('trnplan')}")
        except PackageNotFoundError:
            typer.echo("trnplan (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Plan AI-accelerator rack and datacenter deployments from YAML specs, proven optimal by a MILP.

    Specs are YAML files of chips, rack forms, switches, cooling, sites and scenarios; plans are
    YAML files in plans/, meant to live in git and be diffed in pull requests.

    Examples:

        trnplan show forms
        trnplan optimize trn3-100k
        trnplan diff main:plans/trn3-100k.yaml plans/trn3-100k.yaml
    """


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`trnplan`, `python -m trnplan`)."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="trnplan")
    except KeyboardInterrupt:
        _echo_err("interrupted")
        raise SystemExit(EXIT_INTERRUPTED) from None
