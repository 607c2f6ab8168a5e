"""The GitHub App manifest flow: the web form and the code conversion.

On github.com a person's browser POSTs a form field ``manifest`` (the App's JSON
manifest) to ``/settings/apps/new?state=S`` (or ``/organizations/ORG/settings/apps/new?state=S``),
names the App on GitHub's page and presses "Create GitHub App"; GitHub then redirects the browser
to the manifest's ``redirect_url`` with ``?code=C&state=S``. The fake does the pressing itself:
a valid manifest is answered at once with that 302. The code is good for one hour and once:
``POST /app-manifests/{code}/conversions`` (no authentication) answers 201 with the App's id,
slug, ``pem``, ``webhook_secret``, ``client_id``, ``client_secret``, ``html_url``...; an unknown,
used or expired code is 404. The App it creates is the fake's own (its id, client id and
private key), named as the manifest says, so the key it hands out authenticates against the fake.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiohttp import web
from cryptography.hazmat.primitives import serialization

from .api import ApiError, Call, Reply, Route
from .state import iso, pseudo_sha

CODE_LIFETIME = 3600.0  # GitHub: "This code is valid for one hour."
DOCS_CONVERSION = "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"
FORM_PATH = re.compile(r"^/(?:organizations/(?P<org>[^/]+)/)?settings/apps/new/?$")


@dataclass
class Registration:
    """One App registered through the manifest form."""

    manifest: dict[str, Any]
    state: str | None
    org: str | None  # the organization it was registered for, else the person's own account
    code: str
    expires_at: float
    converted: bool = False


def slug_of(name: str) -> str:
    """GitHub's slug for an App name: lower case, each run of other characters a dash."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _problem(manifest: Any) -> str | None:
    if not isinstance(manifest, dict):
        return "the manifest is not a JSON object"
    if not isinstance(manifest.get("url"), str) or not manifest["url"]:
        return "url is required"
    hook = manifest.get("hook_attributes")
    if hook is not None and (not isinstance(hook, dict) or not isinstance(hook.get("url"), str) or not hook["url"]):
        return "hook_attributes.url is required"
    if not isinstance(manifest.get("name"), str) or not slug_of(manifest["name"]):
        # GitHub asks the person for a name on its page; the fake has no person to ask.
        return "name is required (the fake GitHub has no page to ask for one)"
    for key in ("redirect_url", "setup_url"):
        value = manifest.get(key)
        if value is not None and urlsplit(str(value)).scheme not in ("http", "https"):
            return f"{key} must be an http(s) URL"
    return None


def manifest_form(fake: Any, method: str, raw_path: str, query: dict[str, str], body: bytes,
                  content_type: str) -> web.Response:
    """``POST /settings/apps/new`` (or an organization's): GitHub's web page, not the API."""
    found = FORM_PATH.match(raw_path)
    assert found is not None
    if method != "POST":
        return web.Response(status=200, text="<html><body>Register new GitHub App</body></html>",
                            content_type="text/html")
    if not content_type.startswith("application/x-www-form-urlencoded"):
        return web.Response(status=422, text="a manifest is sent as a form field `manifest`", content_type="text/plain")
    form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    try:
        manifest = json.loads(form.get("manifest", ""))
    except json.JSONDecodeError:
        manifest = None
    problem = _problem(manifest) if "manifest" in form else "the form has no `manifest` field"
    if problem is not None:
        return web.Response(status=422, text=f"Invalid GitHub App manifest: {problem}", content_type="text/plain")
    org = found.group("org")
    if org is not None and fake.users.get(org.lower()) is None:
        return web.Response(status=404, text="Not Found", content_type="text/plain")
    state = query.get("state")
    code = secrets.token_hex(10)
    fake.manifest_registrations.append(
        Registration(manifest, state, org, code, time.time() + fake.manifest_code_lifetime))
    redirect = manifest.get("redirect_url")
    if not redirect:  # no redirect_url: GitHub shows the new App's page
        return web.Response(status=302, headers={"Location": f"{fake.html_url}/apps/{slug_of(manifest['name'])}"})
    parts = urlsplit(redirect)
    params = parse_qsl(parts.query, keep_blank_values=True) + [("code", code)]
    if state is not None:
        params.append(("state", state))
    location = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(params), ""))
    return web.Response(status=302, headers={"Location": location})


def _pkcs1(private_pem: str) -> str:
    """The key as GitHub hands it out: ``-----BEGIN RSA PRIVATE KEY-----``."""
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


def convert(call: Call) -> Reply:
    fake = call.fake
    code = call.params["code"]
    registration = next((r for r in fake.manifest_registrations if r.code == code), None)
    if registration is None or registration.converted or registration.expires_at <= time.time():
        raise ApiError(404, "Not Found", documentation_url=DOCS_CONVERSION)
    registration.converted = True
    manifest = registration.manifest
    slug = slug_of(manifest["name"])
    owner = fake.user(registration.org) if registration.org else fake.user("octocat")
    fake.app_name = manifest["name"]
    now = iso(time.time())
    hook = manifest.get("hook_attributes") or {}
    body = {
        "id": fake.app_id,
        "slug": slug,
        "node_id": f"A_{pseudo_sha('app', fake.app_id)[:12]}",
        "client_id": fake.client_id,
        "owner": fake.render.user(owner.login),
        "name": manifest["name"],
        "description": manifest.get("description") or "",
        "external_url": manifest["url"],
        "html_url": f"{fake.html_url}/apps/{slug}",
        "created_at": now,
        "updated_at": now,
        "permissions": {"metadata": "read", **dict(manifest.get("default_permissions") or {})},
        "events": list(manifest.get("default_events") or []),
        "client_secret": secrets.token_hex(20),
        "webhook_secret": secrets.token_hex(20) if hook else None,
        "pem": _pkcs1(fake.private_key_pem),
    }
    return Reply(201, body)


ROUTES = [
    Route("POST", "/app-manifests/{code}/conversions", convert, auth="any", repo=False),
]
