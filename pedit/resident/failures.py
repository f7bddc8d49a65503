"""A request's failure in the resident process, carried to the client and raised there as
the error an in-process run raises: the same line, the same exit code."""

from __future__ import annotations

from ..backends import BackendError, ContextFull
from ..errors import ConflictError, InternalError, ModelError, PeditError, RefusedError, UsageError
from .protocol import Failure

KINDS: dict[str, type[PeditError]] = {
    "usage": UsageError, "model": ModelError, "conflict": ConflictError, "refused": RefusedError,
    "internal": InternalError,
}  # fmt: skip


def failure(exc: BaseException) -> Failure:
    """What the client needs to raise `exc` again."""
    if isinstance(exc, RefusedError):
        extra = {"force": exc.forceable, "reason": exc.reason}
        return Failure("refused", exc.message, int(exc.exit_code), extra)
    for kind, cls in KINDS.items():
        if type(exc) is cls:
            return Failure(kind, exc.message, int(exc.exit_code))
    if isinstance(exc, ContextFull):
        return Failure("context", str(exc), 2, {"args": list(exc.numbers)})
    if isinstance(exc, BackendError):
        return Failure("backend", str(exc), 3)
    return Failure("internal", f"{type(exc).__name__}: {exc}", 70)


def reraise(f: Failure) -> None:
    """Raise the error `f` stands for."""
    if f.kind == "refused":
        raise RefusedError(f.message, force=f.extra.get("force", False), reason=f.extra.get("reason", ""))
    if f.kind == "context":
        raise ContextFull(*f.extra["args"])
    if f.kind == "backend":
        raise BackendError(f.message)
    if f.kind in ("busy", "stopping"):  # the resident turned it away: the model's, exit 3
        raise ModelError(f.message)
    raise KINDS.get(f.kind, InternalError)(f.message)
