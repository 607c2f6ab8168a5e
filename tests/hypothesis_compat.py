"""hypothesis-jsonschema 0.23 builds objects with `many(...).more()`, an API of
Hypothesis's internals that newer Hypothesis releases replaced by an iterator. This
restores the old shape for it alone (same draws: a boolean per element, forced at the
size bounds), and does nothing on a Hypothesis that still has `more()`."""

from __future__ import annotations

from typing import Any

import hypothesis_jsonschema._from_schema as from_schema_module
from hypothesis.internal.conjecture import utils as cu


class _Many:
    def __init__(self, data: Any, min_size: int, max_size: float, average_size: float) -> None:
        self.data, self.min_size, self.max_size, self.count = data, min_size, max_size, 0
        self.p_continue = cu._calc_p_continue(average_size - min_size, max_size - min_size)

    def more(self) -> bool:
        forced = True if self.count < self.min_size else False if self.count >= self.max_size else None
        go = self.data.draw_boolean(self.p_continue if forced is None else 0.5, forced=forced)
        self.count += go
        return bool(go)

    def reject(self, why: str | None = None) -> None:
        self.count -= 1


class _Utils:
    def __getattr__(self, name: str) -> Any:
        return _Many if name == "many" else getattr(cu, name)


if not hasattr(cu.many, "more"):
    from_schema_module.cu = _Utils()  # type: ignore[assignment]
