"""GitHub App endpoints (JWT), the installation's repositories, and ``/rate_limit``."""

from __future__ import annotations

import time
from typing import Any

from . import hooks
from .api import LEVELS, MSG_SUSPENDED, ApiError, Call, Reply, Route, not_found, paginate
from .render import template
from .state import Installation, iso


def _installation(call: Call) -> Installation:
    installation = call.fake.installations.get(call.int_param("installation_id"))
    if installation is None:
        raise not_found()
    return installation


def _requested_repo_ids(
    call: Call, installation: Installation, body: dict[str, Any]
) -> set[int] | None:
    names = body.get("repositories") or []
    ids = body.get("repository_ids") or []
    if not names and not ids:
        return None
    wanted: set[int] = set()
    for name in names:
        repo = call.fake.find_repo(installation.account, str(name))
        wanted.add(repo.id if repo is not None else -1)
    wanted.update(int(repo_id) for repo_id in ids)
    if not wanted <= installation.repo_ids:
        raise ApiError(
            422,
            "There is at least one repository that does not exist or is not accessible "
            "to the parent installation.",
        )
    return wanted


def create_access_token(call: Call) -> Reply:
    fake = call.fake
    installation = _installation(call)
    if installation.suspended_at is not None:
        raise ApiError(403, MSG_SUSPENDED)
    body = call.json()
    repo_ids = _requested_repo_ids(call, installation, body)
    permissions = body.get("permissions")
    if permissions:
        for name, level in permissions.items():
            granted = installation.permissions.get(name)
            if granted is None or LEVELS.get(str(level), 99) > LEVELS.get(granted, 0):
                raise ApiError(
                    422, "The permissions requested are not granted to this installation."
                )
    token = fake.mint_token(installation.id, permissions=permissions, repo_ids=repo_ids)
    result = template("apps.create-installation-access-token.201")
    result.update(
        token=token.token,
        expires_at=iso(token.expires_at),
        permissions=dict(token.permissions),
        repository_selection="selected"
        if repo_ids is not None
        else installation.repository_selection,
    )
    visible = repo_ids if repo_ids is not None else installation.repo_ids
    if repo_ids is not None or installation.repository_selection == "selected":
        result["repositories"] = [
            fake.render.repo_full(repo) for repo in fake.repos.values() if repo.id in visible
        ]
    else:
        result.pop("repositories", None)
    return Reply(201, result)


def get_app(call: Call) -> Reply:
    return Reply(200, call.fake.render.app())


def list_installations(call: Call) -> Reply:
    render = call.fake.render
    return paginate(call, [render.installation(inst) for inst in call.fake.installations.values()])


def get_installation(call: Call) -> Reply:
    return Reply(200, call.fake.render.installation(_installation(call)))


def get_repo_installation(call: Call) -> Reply:
    installation = call.fake.installation_for(call.repo)
    if installation is None:
        raise not_found()
    return Reply(200, call.fake.render.installation(installation))


def installation_repositories(call: Call) -> Reply:
    principal = call.principal
    if principal.installation is None:
        raise ApiError(403, "This endpoint requires you to be authenticated as an installation.")
    visible = (
        principal.repo_ids if principal.repo_ids is not None else principal.installation.repo_ids
    )
    repos = [
        call.fake.render.repo_full(repo) for repo in call.fake.repos.values() if repo.id in visible
    ]
    reply = paginate(call, repos, "repositories")
    reply.body["repository_selection"] = principal.installation.repository_selection
    return reply


def authenticated_user(call: Call) -> Reply:
    """`GET /user`: the user a personal token belongs to; an installation token is refused."""
    if call.principal.kind != "user":
        raise ApiError(403, "Resource not accessible by integration")
    return Reply(200, call.fake.render.user(call.principal.login))


#: The one GraphQL query the fake answers (whitespace aside): whose a token is.
VIEWER_LOGIN = "query { viewer { login } }"


def graphql(call: Call) -> Reply:
    """`POST /graphql`: of GitHub's GraphQL API, the `viewer`'s login. It answers any token: a
    personal token's user, an installation token's `<app-slug>[bot]` (as the job's GITHUB_TOKEN
    answers `github-actions[bot]`), where REST's `GET /user` refuses the latter. A query that does
    not parse, as GitHub answers it, is a 200 with `errors`; the fake parses no other query."""
    query = call.json(required=True).get("query")
    if not isinstance(query, str) or " ".join(query.replace("{", " { ").replace("}", " } ").split()) != VIEWER_LOGIN:
        return Reply(200, {"errors": [{"message": "the fake GitHub answers only `query { viewer { login } }`"}]})
    return Reply(200, {"data": {"viewer": {"login": call.principal.login}}})


def rate_limit(call: Call) -> Reply:
    bucket = call.fake.rate_limits.bucket(call.principal.rate_key)
    body = template("rate-limit.get.200")
    reset = int(time.time()) + 3600
    for resource in body["resources"].values():
        resource.update(used=0, remaining=resource["limit"], reset=reset)
    body["resources"]["core"] = bucket.as_json()
    body["rate"] = bucket.as_json()
    return Reply(200, body)


ROUTES = [
    *hooks.ROUTES,
    Route(
        "POST",
        "/app/installations/{installation_id}/access_tokens",
        create_access_token,
        auth="app",
        repo=False,
    ),
    Route("GET", "/app", get_app, auth="app", repo=False),
    Route("GET", "/app/installations", list_installations, auth="app", repo=False),
    Route("GET", "/app/installations/{installation_id}", get_installation, auth="app", repo=False),
    Route("GET", "/installation", get_repo_installation, auth="app"),
    Route("GET", "/installation/repositories", installation_repositories, repo=False),
    Route("GET", "/user", authenticated_user, repo=False),
    Route("POST", "/graphql", graphql, repo=False),
    Route(
        "GET", "/rate_limit", rate_limit, auth="any", repo=False, counts_against_rate_limit=False
    ),
]
