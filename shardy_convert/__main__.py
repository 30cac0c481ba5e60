"""`python -m shardy_convert` and the `shardy-convert` script run the command line."""


def run() -> None:
    """The command line, Ctrl-C taken from its start (before click and the commands are
    imported): every command ends on it with exit 130, no traceback (cli/interrupt.py)."""
    from .cli.interrupt import install

    install()
    from .cli.main import main

    main()


if __name__ == "__main__":
    run()
