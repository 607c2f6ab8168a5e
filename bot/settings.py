"""Process settings from the environment (the repository's own settings are in
`bot.config`). Refuses to start without a webhook secret."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


class SettingsError(ValueError):
    """A setting is missing or wrong; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    webhook_secret: str
    #: The secret GitHub signed with before a rotation (GITHUB_WEBHOOK_SECRET_PREVIOUS): also accepted, until removed.
    previous_webhook_secret: str | None = None
    app_id: str | None = None
    private_key: str | None = None
    token: str | None = None
    api_url: str = "https://api.github.com"
    port: int = 8080
    host: str = "0.0.0.0"
    queue_size: int = 200
    workers: int = 4
    max_body_bytes: int = 25 * 1024 * 1024
    drain_seconds: float = 25.0
    log_format: str = "text"  # or "json": one JSON object a line
    log_level: str | None = None  # None: as the caller configured logging
    credentials_recheck_seconds: float = 60.0  # while GitHub refuses the credentials
    data_dir: Path | None = None  # the journal's directory; None: in memory (tests)
    redeliver_minutes: float = 10.0  # how often failed deliveries are looked for; 0: never
    redeliver_window_hours: float = 24.0  # how far back
    redeliver_first_seconds: float = 5.0  # the first look, after the server listens
    reconcile_minutes: float = 30.0  # how often lane runs whose delivery never came are looked for; 0: never
    redis_url: str | None = None  # the journal in Redis, shared by replicas (else SQLite in data_dir)
    worker_process: bool = False  # the work in a process of its own (`foldbot serve`: yes, unless told no)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "Settings":
        secret = env.get("GITHUB_WEBHOOK_SECRET", "")
        if not secret:
            raise SettingsError("GITHUB_WEBHOOK_SECRET is required: foldbot refuses unsigned webhooks")
        token = env.get("GITHUB_TOKEN") or None
        app_id = env.get("GITHUB_APP_ID") or None
        key = env.get("GITHUB_PRIVATE_KEY") or None
        key_path = env.get("GITHUB_PRIVATE_KEY_PATH") or None
        if key is None and key_path is not None:
            try:
                key = Path(key_path).read_text(encoding="utf-8")
            except OSError as exc:
                raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH: cannot read {key_path}: {exc.strerror}") from None
            except UnicodeDecodeError:
                raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH: {key_path} is not text: the App's key is the PEM file "
                                    "GitHub gives (a DER key converts with `openssl pkey -inform DER -in KEY -out "
                                    "key.pem`)") from None
        if token is None:
            if app_id is None or key is None:
                raise SettingsError("set GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH), "
                                    "or GITHUB_TOKEN for a single repository")
            if not (app_id.isascii() and app_id.isdigit()):
                raise SettingsError(f"GITHUB_APP_ID must be the App's numeric id, not {app_id!r}")
            if "PRIVATE KEY" not in key:
                raise SettingsError("GITHUB_PRIVATE_KEY must be the App's PEM private key")
        elif app_id is not None:
            raise SettingsError("set either GITHUB_TOKEN or GITHUB_APP_ID, not both")
        return cls(
            webhook_secret=secret,
            previous_webhook_secret=env.get("GITHUB_WEBHOOK_SECRET_PREVIOUS") or None,
            app_id=app_id,
            private_key=key if token is None else None,
            token=token,
            api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            port=_int(env, "PORT", 8080, 1, 65535),
            host=env.get("HOST") or "0.0.0.0",
            queue_size=_int(env, "FOLDBOT_QUEUE_SIZE", 200, 1, 100_000),
            workers=_int(env, "FOLDBOT_WORKERS", 4, 1, 64),
            log_format=_choice(env, "FOLDBOT_LOG_FORMAT", "text", ("text", "json")),
            log_level=_choice(env, "FOLDBOT_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"), upper=True),
            data_dir=Path(env.get("FOLDBOT_DATA_DIR") or "data"),
            redeliver_minutes=_int(env, "FOLDBOT_REDELIVER_MINUTES", 10, 0, 24 * 60),
            reconcile_minutes=_int(env, "FOLDBOT_RECONCILE_MINUTES", 30, 0, 24 * 60),
            redeliver_window_hours=_int(env, "FOLDBOT_REDELIVER_WINDOW_HOURS", 24, 1, 70),
            redis_url=_redis_url(env.get("FOLDBOT_REDIS_URL") or None),
            worker_process=_choice(env, "FOLDBOT_WORKER_PROCESS", "yes", ("yes", "no")) == "yes",
            drain_seconds=float(_int(env, "FOLDBOT_DRAIN_SECONDS", 25, 1, 3600)),
        )


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:  # (`int` reads `²` and `٣` too)
        raise SettingsError(f"{name} must be a whole number from {low} to {high}, not {raw!r}")
    return int(raw)


def _redis_url(url: str | None) -> str | None:
    """FOLDBOT_REDIS_URL as Redis reads it, or why not: its scheme, a numeric port and database
    (`redis://host:6379/abc` was read as database 0, without a word)."""
    if url is None:
        return None
    what = "FOLDBOT_REDIS_URL must be redis://[user:password@]host[:port][/db], rediss://... or unix://path"
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise SettingsError(f"{what}: it starts with none of those (it is not echoed: it may hold a password)")
    try:
        parts.port  # noqa: B018 (it raises for a port that is not a number)
    except ValueError:
        raise SettingsError(f"{what}: its port is not a number") from None
    db = parts.path.strip("/") if parts.scheme != "unix" else ""
    if db and not (db.isascii() and db.isdigit()):
        raise SettingsError(f"{what}: its database is a number, not {db!r}")
    return url


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...], *, upper: bool = False) -> str:
    raw = env.get(name) or default
    value = raw.upper() if upper else raw.lower()
    if value not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, not {raw!r}")
    return value
