"""`python -m trnplan`: the same command as `trnplan`."""

from trnplan.cli import main

if __name__ == "__main__":
    main()
