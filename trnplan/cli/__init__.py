"""The `trnplan` command: a thin layer that parses options, calls the library, renders, and exits.

This is the only package that uses typer. PuLP and highspy are imported only by `optimize`, inside the
command, so `--help`, `show`, `bom` and `diff` start fast.

Exit codes: 0 ok; 1 differences found (`diff --exit-code`, `--fail-if`, `optimize --check`) or an
unexpected internal error (reported in one line; set TRNPLAN_DEBUG=1 for the traceback); 2 usage;
3 invalid specs or input; 4 infeasible; 5 solver failure or time limit with no plan; 130 interrupted.
"""

from trnplan.cli import plans, solve, specs
from trnplan.cli.app import app, main

# Registered here, in the order `trnplan --help` lists them.
for _command in (specs.validate, specs.show, solve.optimize, plans.bom, plans.diff, specs.schema):
    app.command()(_command)

__all__ = ["app", "main"]
