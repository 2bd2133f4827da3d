"""`python -m kvplan` behaves exactly like the `kvplan` command."""

from kvplan.cli.app import main

if __name__ == "__main__":
    main()
