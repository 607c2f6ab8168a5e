"""GitHub App authentication: RSA keys, App JWT verification, token parsing."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, NamedTuple

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .state import Installation

# GitHub rejects App JWTs whose expiry is more than ten minutes away.
MAX_JWT_LIFETIME = 10 * 60
# Tolerated clock drift for ``iat`` in the future.
IAT_LEEWAY = 60

MSG_JWT_UNDECODABLE = "A JSON web token could not be decoded"
MSG_JWT_EXPIRED = (
    "'Expiration time' claim ('exp') must be a numeric value representing the future "
    "time at which the assertion expires"
)
MSG_JWT_TOO_LONG = "'Expiration time' claim ('exp') is too far in the future"
MSG_JWT_BAD_IAT = (
    "'Issued at' claim ('iat') must be an Integer representing the time that the "
    "assertion was issued"
)


class RsaKeyPair(NamedTuple):
    private_pem: str
    public_pem: str


def make_rsa_key(bits: int = 2048) -> RsaKeyPair:
    """Generate a fresh RSA key pair as PEM text (PKCS#8 private, SPKI public)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return RsaKeyPair(private_pem, public_pem)


@lru_cache(maxsize=1)
def default_key() -> RsaKeyPair:
    """One key pair per test session: generating RSA keys is the slow part."""
    return make_rsa_key()


@lru_cache(maxsize=16)
def public_key_from_private(private_pem: str) -> str:
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def new_installation_token() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghs_" + "".join(secrets.choice(alphabet) for _ in range(36))


class JwtRejected(Exception):
    """The App JWT is not acceptable; ``str(exc)`` is GitHub's 401 message."""


def _numeric_claim(claims: dict[str, Any], name: str, message: str) -> int:
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JwtRejected(message)
    return int(value)


def verify_app_jwt(
    token: str, *, public_key_pem: str, app_id: int, client_id: str, now: float
) -> None:
    """Check an App JWT the way GitHub does; raise :class:`JwtRejected` if it fails."""
    try:
        claims = jwt.decode(
            token,
            public_key_pem,
            algorithms=["RS256"],
            options={"verify_exp": False, "verify_iat": False, "verify_nbf": False},
        )
    except jwt.InvalidTokenError as exc:
        raise JwtRejected(MSG_JWT_UNDECODABLE) from exc
    iat = _numeric_claim(claims, "iat", MSG_JWT_BAD_IAT)
    exp = _numeric_claim(claims, "exp", MSG_JWT_EXPIRED)
    if str(claims.get("iss")) not in {str(app_id), client_id}:
        raise JwtRejected(MSG_JWT_UNDECODABLE)
    if iat > now + IAT_LEEWAY:
        raise JwtRejected(MSG_JWT_BAD_IAT)
    if exp <= now:
        raise JwtRejected(MSG_JWT_EXPIRED)
    if exp - iat > MAX_JWT_LIFETIME or exp > now + MAX_JWT_LIFETIME:
        raise JwtRejected(MSG_JWT_TOO_LONG)


def parse_authorization(header: str | None) -> tuple[str, str] | None:
    """Split ``Authorization: <scheme> <credential>``; scheme is lower-cased."""
    if not header:
        return None
    scheme, _, credential = header.strip().partition(" ")
    if not credential.strip():
        return None
    return scheme.lower(), credential.strip()


def looks_like_jwt(credential: str) -> bool:
    return credential.count(".") == 2 and not credential.startswith(("ghs_", "ghp_", "github_pat_"))


@dataclass(frozen=True)
class Principal:
    """Who a request is authenticated as."""

    kind: Literal["app", "installation", "user", "anonymous"]
    login: str
    permissions: dict[str, str]
    installation: Installation | None = None
    repo_ids: frozenset[int] | None = None  # None: not restricted beyond the installation
    user_id: int = 0

    @property
    def rate_key(self) -> str:
        if self.kind == "installation" and self.installation is not None:
            return f"installation:{self.installation.id}"
        return f"{self.kind}:{self.login}"

    @property
    def rate_subject(self) -> str:
        """The words GitHub uses in its primary rate limit message."""
        if self.kind == "installation" and self.installation is not None:
            return f"installation ID {self.installation.id}"
        if self.kind == "anonymous":
            return "127.0.0.1"
        return f"user ID {self.user_id}"


ANONYMOUS = Principal(kind="anonymous", login="", permissions={})
