"""foldbot's log lines: plain text (the default) or one JSON object a line
(`FOLDBOT_LOG_FORMAT=json`). A line written while a delivery is processed carries its
delivery id, repository and event (context variables set by the server, so lines of
the GitHub client carry them too); a GitHub call's lines carry `method`, `path`,
`status` and `attempt`. Tokens are never put in a line: a call's path is logged
without its host and query, never a header."""

from __future__ import annotations

import contextvars
import json
import logging
import time
from typing import Any

delivery_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("foldbot_delivery", default=None)
repository_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("foldbot_repository", default=None)
event_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("foldbot_event", default=None)

#: Fields a call's log line may carry (`extra=`), copied into the JSON line.
CALL_FIELDS = ("method", "path", "status", "attempt", "wait")


def bind(delivery: str | None, repository: str | None, event: str | None) -> None:
    """The delivery this task (and the tasks it starts) works on."""
    delivery_var.set(delivery)
    repository_var.set(repository)
    event_var.set(event)


def delivery_note() -> str:
    """` (delivery <id>)` inside a delivery, else nothing: for plain-text lines."""
    delivery = delivery_var.get()
    return f" (delivery {delivery})" if delivery else ""


_CONTEXT = (("delivery", delivery_var), ("repository", repository_var), ("event", event_var))
_factory = logging.getLogRecordFactory()


def _record(*args: Any, **kwargs: Any) -> logging.LogRecord:
    """A log record that remembers the delivery it was written for, when it is written
    (a handler may format it later, elsewhere)."""
    record = _factory(*args, **kwargs)
    for key, var in _CONTEXT:
        value = var.get()
        if value is not None:
            setattr(record, f"foldbot_{key}", value)
    return record


if not getattr(_factory, "foldbot", False):
    _record.foldbot = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(_record)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, _ in _CONTEXT:
            value = getattr(record, f"foldbot_{key}", None)
            if value:
                line[key] = value
        for key in CALL_FIELDS:
            if hasattr(record, key):
                line[key] = getattr(record, key)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(log_format: str, level: str = "INFO") -> None:
    """Use `log_format` ("text" or "json") on every handler of the root logger."""
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig()
    root.setLevel(level)
    for handler in root.handlers:
        if log_format == "json":
            handler.setFormatter(JsonFormatter())
