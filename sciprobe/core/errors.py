"""User-facing errors: one clear line, no traceback at the CLI."""


class SciprobeError(ValueError):
    """An error caused by the user's input or environment (bad file, unknown id, empty cutoff...).

    The CLI prints ``error: <message>`` and exits with status 2; library callers catch it by type
    (it is a ``ValueError``, so metric modules raise it where ``evaluate`` users expect one).
    """
