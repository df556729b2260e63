"""The error family of iou-eval.

Every error knows its exit code and renders itself; only ``cli.py`` prints
and exits.  No click here, so the library raises the same errors.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_INPUT = 1  # bad input: a file that cannot be read or understood
EXIT_USAGE = 2  # bad options on the command line
EXIT_GATE = 3  # a quality gate failed
EXIT_INTERNAL = 4  # an unexpected exception: a bug in iou-eval (the CLI says where to report it)


class IouEvalError(Exception):
    """Base of all errors iou-eval raises on purpose."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def format(self) -> str:
        text = self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.format()

    def __reduce__(self):
        # Errors cross from worker processes pickled; subclasses take other
        # arguments, so rebuild from the attributes.
        return (_restore, (type(self), self.args, self.__dict__))


def _restore(cls: type[IouEvalError], args: tuple, state: dict) -> IouEvalError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class InputError(IouEvalError):
    """A file the user gave is missing, malformed or inconsistent.

    Renders as ``path:where: message`` (``where`` is a line number, a JSON path
    such as ``annotations[3].bbox``, or an XML element) followed by a hint.
    """

    exit_code = EXIT_INPUT

    def __init__(
        self,
        path: str | None,
        message: str,
        where: str | int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.path = path
        self.where = where

    def format(self) -> str:
        head = ""
        if self.path:
            head = f"{self.path}:"
            if self.where is not None and self.where != "":
                head += f"{self.where}:"
            head += " "
        text = head + self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class IouEvalDoubt(UserWarning):
    """A doubt about the numbers as the files were read, issued by ``evaluate()`` and
    ``Evaluator.compute()`` (``strict=True`` raises an :class:`InputError` instead).

    The message names the problem and the option that fixes it; the same
    text is in ``result.warnings`` and the JSON ``doubts``.
    """


class UsageError(IouEvalError):
    """Options that contradict each other or the input (exit code 2)."""

    exit_code = EXIT_USAGE


class ArgumentError(InputError, ValueError):
    """An array given to the IoU toolkit (``iou_eval.iou``) is malformed (names the argument and index)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(None, message, hint=hint)
