"""`python -m trnplan`, and the `trnplan` console script's entry point (`trnplan.__main__:main`).

The CLI's imports (typer, rich, pydantic) take a few hundred milliseconds, before `trnplan.cli.main` can
catch anything: a Ctrl-C in them is caught here, so it prints `interrupted` and exits 130, as it does
later, instead of a traceback. This module imports nothing else, so there is nothing for Ctrl-C to cut.
"""

import sys

EXIT_INTERRUPTED = 130  # trnplan.errors.EXIT_INTERRUPTED; not imported, so that importing this cannot fail


def main() -> None:
    """Import the CLI and run it; Ctrl-C at any moment of it is `interrupted`, exit 130."""
    try:
        from trnplan.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    cli_main()


if __name__ == "__main__":
    main()
