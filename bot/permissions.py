"""Who may do what: the **effective** repository role of a user (never the comment's
`author_association`), and SGLang's `.github/CI_PERMISSIONS.json` allowlist. Pure."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .config import ROLES
from .report import md_escape

#: The legacy `permission` field, for custom roles whose `role_name` is not a base role.
_LEGACY = {"admin": "admin", "write": "write", "read": "read", "none": "none"}
#: The answer's `user.permissions` hash, highest first: a custom role's base role ("maintain" is mapped to
#: "write" in the legacy field; GitHub's docs: "The permissions hash can also be used to determine ...").
_HASH = (("admin", "admin"), ("maintain", "maintain"), ("push", "write"), ("triage", "triage"), ("pull", "read"))


def rank(role: str) -> int:
    return ROLES.index(role) if role in ROLES else 0


def effective_role(data: dict[str, Any]) -> str:
    """The base role of a collaborator-permission answer: `role_name` when it is a base role
    (triage and maintain exist only there); for a custom role, the highest its `user.permissions`
    hash grants (a custom role on maintain reads `permission: write`), else the legacy `permission`."""
    role = str(data.get("role_name") or "")
    if role in ROLES:
        return role
    user = data.get("user")
    granted = user.get("permissions") if isinstance(user, dict) else None
    if isinstance(granted, dict):
        for key, base in _HASH:
            if granted.get(key) is True:
                return base
    return _LEGACY.get(str(data.get("permission") or "none"), "none")


def permitted(role: str, needed: str, what: str, user: str, allowance: "Allowance | None" = None) -> str | None:
    """None when `role` may run `what`, else the reply saying why not. An allowlisted user
    (`can_rerun_stage`) may dispatch whatever their role."""
    if rank(role) >= rank(needed) or (what == "dispatch" and allowance is not None and allowance.can_rerun_stage):
        return None
    return (f"`{what}` needs the **{needed}** permission on this repository; {md_escape(user)} has "
            f"**{role}**. Ask a maintainer.")


@dataclass(frozen=True)
class Allowance:
    """An entry of CI_PERMISSIONS.json: `{"<login>": {"can_rerun_stage": true, "cooldown_interval_minutes": 0}}`."""

    can_rerun_stage: bool
    cooldown_minutes: int | None


#: The longest cooldown an entry sets: a week (a longer one is taken as a week).
MAX_COOLDOWN_MINUTES = 7 * 24 * 60


def parse_ci_permissions(text: str) -> dict[str, Allowance]:
    """The allowlist; entries that are not objects are ignored, as SGLang's own workflow does."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("CI_PERMISSIONS.json nests too deeply to read") from None
    if not isinstance(data, dict):
        raise ValueError("CI_PERMISSIONS.json must be an object keyed by login")
    out = {}
    for login, entry in data.items():
        if not isinstance(entry, dict):
            continue
        cooldown = entry.get("cooldown_interval_minutes")
        out[str(login).lower()] = Allowance(
            can_rerun_stage=entry.get("can_rerun_stage") is True,
            # (a negative or NaN number is no count of minutes; 1e999, which JSON reads as infinity, is the most)
            cooldown_minutes=int(min(cooldown, MAX_COOLDOWN_MINUTES)) if isinstance(cooldown, (int, float))
            and not isinstance(cooldown, bool) and not math.isnan(cooldown) and cooldown >= 0 else None,
        )
    return out
