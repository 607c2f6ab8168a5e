"""Issues, pull requests, issue comments, reactions and issue labels."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .api import (
    ApiError,
    Call,
    Reply,
    Route,
    invalid_field,
    issue_locked,
    issues_disabled,
    missing_fields,
    not_found,
    paginate,
    require,
    require_str,
    validation_failed,
)
from .state import REACTION_CONTENTS, Comment, Issue, Pull, Reaction

ISSUES_READ = (("issues", "read"), ("pull_requests", "read"))
ISSUES_WRITE = (("issues", "write"), ("pull_requests", "write"))
PULLS_READ = (("pull_requests", "read"),)
PULLS_WRITE = (("pull_requests", "write"),)


#: GitHub's limit on an issue, pull request or comment body.
MAX_BODY = 65536


def _body_fits(resource: str, text: Any) -> Any:
    """GitHub refuses a body over 65,536 characters: 422 Validation Failed."""
    if isinstance(text, str) and len(text) > MAX_BODY:
        raise ApiError(422, "Validation Failed", errors=[{
            "resource": resource, "code": "custom", "field": "body",
            "message": f"body is too long (maximum is {MAX_BODY} characters)"}])
    return text


def _issue(call: Call) -> Issue:
    issue = call.repo.issues.get(call.int_param("issue_number"))
    if issue is None:
        raise not_found()
    if not issue.is_pull and not call.repo.has_issues:
        raise issues_disabled()
    return issue


def _issues_on(call: Call) -> None:
    if not call.repo.has_issues:
        raise issues_disabled()


def _require_for(call: Call, issue: Issue, level: str) -> None:
    """Issues need ``issues``; pull requests accept ``issues`` or ``pull_requests``."""
    if issue.is_pull:
        require(call, ("issues", level), ("pull_requests", level))
    else:
        require(call, ("issues", level))


def _unlocked_for(call: Call, issue: Issue, what: str) -> None:
    """On a locked conversation only collaborators (a role of `write` or more) may comment or
    react; an App's installation is none."""
    if issue.locked and not (call.principal.kind == "user"
                             and call.repo.role_of(call.principal.login) in ("write", "maintain", "admin")):
        raise issue_locked(what)


def _sorted(items: Iterable[Any], call: Call, created: str = "created_at", *, pulls: bool = False) -> list[Any]:
    """Issues default to newest first; pull requests only when sorted by creation
    (GitHub: "Default: desc when sort is created or sort is not specified, otherwise asc")."""
    sort = call.query.get("sort", "created")
    key = "updated_at" if sort == "updated" else created
    default = "desc" if not pulls or sort == "created" else "asc"
    descending = call.query.get("direction", default) != "asc"
    return sorted(items, key=lambda item: (getattr(item, key), item.number), reverse=descending)


def _touch(call: Call, issue: Issue) -> None:
    issue.updated_at = call.fake.clock.stamp_after(issue.updated_at)


def _label_names(call: Call, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, (str, dict)) for item in value):
        raise invalid_field(
            "Issue", "labels", "For 'properties/labels', labels is not an array of strings."
        )
    names = [item["name"] if isinstance(item, dict) else item for item in value]
    return [call.fake.add_label(call.repo, str(name)).name for name in names]


# -- issues -----------------------------------------------------------------------


def list_issues(call: Call) -> Reply:
    _issues_on(call)
    state = call.query.get("state", "open")
    wanted = [
        name.strip().lower() for name in call.query.get("labels", "").split(",") if name.strip()
    ]
    creator = call.query.get("creator", "").lower()
    selected = [
        issue
        for issue in call.repo.issues.values()
        if (state == "all" or issue.state == state)
        and all(name in [label.lower() for label in issue.labels] for name in wanted)
        and (not creator or issue.user.lower() == creator)
    ]
    render = call.fake.render
    return paginate(call, [render.issue(call.repo, issue) for issue in _sorted(selected, call)])


def create_issue(call: Call) -> Reply:
    _issues_on(call)
    body = call.json(required=True)
    title = body.get("title")
    if title is None or title == "":
        raise missing_fields("Issue", ["title"])
    labels = _label_names(call, body.get("labels", []))
    issue = call.fake.add_issue(
        call.repo,
        str(title),
        _body_fits("Issue", body.get("body")),
        user_login=call.principal.login,
        labels=labels,
    )
    return Reply(201, call.fake.render.issue(call.repo, issue))


def get_issue(call: Call) -> Reply:
    return Reply(200, call.fake.render.issue(call.repo, _issue(call)))


def update_issue(call: Call) -> Reply:
    body = call.json()
    issue = _issue(call)
    _require_for(call, issue, "write")
    if "title" in body:
        issue.title = str(body["title"])
    if "body" in body:
        issue.body = _body_fits("Issue", body["body"])
    if "state" in body:
        state = body["state"]
        if state not in ("open", "closed"):
            raise validation_failed([{"resource": "Issue", "code": "invalid", "field": "state"}])
        if state != issue.state:
            issue.closed_at = call.fake.clock.stamp() if state == "closed" else None
        issue.state = state
        issue.state_reason = body.get("state_reason") or (
            "completed" if state == "closed" else "reopened"
        )
    if "labels" in body:
        issue.labels = _label_names(call, body["labels"])
    _touch(call, issue)
    return Reply(200, call.fake.render.issue(call.repo, issue))


def add_issue_labels(call: Call) -> Reply:
    body = call.json(required=True)
    issue = _issue(call)
    _require_for(call, issue, "write")
    for name in _label_names(call, body.get("labels", [])):
        if name.lower() not in [label.lower() for label in issue.labels]:
            issue.labels.append(name)
    _touch(call, issue)
    return Reply(200, call.fake.render.labels_of(call.repo, issue.labels))


def remove_issue_label(call: Call) -> Reply:
    issue = _issue(call)
    _require_for(call, issue, "write")
    name = call.params["name"].lower()
    if name not in [label.lower() for label in issue.labels]:
        raise ApiError(404, "Label does not exist")
    issue.labels = [label for label in issue.labels if label.lower() != name]
    _touch(call, issue)
    return Reply(200, call.fake.render.labels_of(call.repo, issue.labels))


# -- comments ----------------------------------------------------------------------


def _comment(call: Call) -> Comment:
    comment = call.repo.comments.get(call.int_param("comment_id"))
    if comment is None:
        raise not_found()
    return comment


def list_comments(call: Call) -> Reply:
    issue = _issue(call)
    _require_for(call, issue, "read")
    render = call.fake.render
    comments = [render.comment(call.repo, call.repo.comments[cid]) for cid in issue.comment_ids]
    return paginate(call, comments)


def create_comment(call: Call) -> Reply:
    body = call.json(required=True)
    issue = _issue(call)
    _require_for(call, issue, "write")
    _unlocked_for(call, issue, "comment")
    text = _body_fits("IssueComment", require_str(body, "body", "IssueComment"))
    comment = call.fake.add_comment(call.repo, issue.number, text, user_login=call.principal.login)
    _touch(call, issue)
    return Reply(201, call.fake.render.comment(call.repo, comment))


def get_comment(call: Call) -> Reply:
    return Reply(200, call.fake.render.comment(call.repo, _comment(call)))


def update_comment(call: Call) -> Reply:
    body = call.json(required=True)
    comment = _comment(call)
    _require_for(call, call.repo.issues[comment.issue_number], "write")
    comment.body = _body_fits("IssueComment", require_str(body, "body", "IssueComment"))
    comment.updated_at = call.fake.clock.stamp_after(comment.updated_at)
    return Reply(200, call.fake.render.comment(call.repo, comment))


def delete_comment(call: Call) -> Reply:
    comment = _comment(call)
    issue = call.repo.issues[comment.issue_number]
    _require_for(call, issue, "write")
    del call.repo.comments[comment.id]
    issue.comment_ids.remove(comment.id)
    return Reply.empty()


# -- reactions ----------------------------------------------------------------------


def _reactions_target(call: Call) -> tuple[list[Reaction], Issue]:
    if "comment_id" in call.params:
        comment = _comment(call)
        return comment.reactions, call.repo.issues[comment.issue_number]
    issue = _issue(call)
    return issue.reactions, issue


def create_reaction(call: Call) -> Reply:
    body = call.json(required=True)
    reactions, issue = _reactions_target(call)
    _require_for(call, issue, "write")
    _unlocked_for(call, issue, "reaction")
    content = require_str(body, "content", "Reaction")
    if content not in REACTION_CONTENTS:
        raise validation_failed([{"resource": "Reaction", "code": "invalid", "field": "content"}])
    login = call.principal.login
    for reaction in reactions:
        if reaction.content == content and reaction.user.lower() == login.lower():
            return Reply(200, call.fake.render.reaction(reaction))
    reaction = Reaction(call.fake.ids.next("reaction"), content, login, call.fake.clock.stamp())
    reactions.append(reaction)
    return Reply(201, call.fake.render.reaction(reaction))


def list_reactions(call: Call) -> Reply:
    reactions, issue = _reactions_target(call)
    _require_for(call, issue, "read")
    content = call.query.get("content")
    selected = [r for r in reactions if content is None or r.content == content]
    return paginate(call, [call.fake.render.reaction(reaction) for reaction in selected])


def delete_reaction(call: Call) -> Reply:
    reactions, issue = _reactions_target(call)
    _require_for(call, issue, "write")
    reaction_id = call.int_param("reaction_id")
    match = [reaction for reaction in reactions if reaction.id == reaction_id]
    if not match:
        raise not_found()
    reactions.remove(match[0])
    return Reply.empty()


# -- pull requests ---------------------------------------------------------------------


def _pull(call: Call) -> Pull:
    pull = call.repo.pulls.get(call.int_param("pull_number"))
    if pull is None:
        raise not_found()
    return pull


def list_pulls(call: Call) -> Reply:
    repo = call.repo
    state = call.query.get("state", "open")
    head = call.query.get("head", "")
    base = call.query.get("base")
    selected = []
    for pull in repo.pulls.values():
        issue = repo.issues[pull.number]
        if state != "all" and issue.state != state:
            continue
        # Like GitHub, a ``head`` without the ``owner:`` prefix filters nothing.
        if ":" in head and pull.head_label.lower() != head.lower():
            continue
        if base is not None and pull.base_ref != base:
            continue
        selected.append(issue)
    render = call.fake.render
    items = [
        render.pull(repo, repo.pulls[issue.number], simple=True)
        for issue in _sorted(selected, call, pulls=True)
    ]
    return paginate(call, items)


def get_pull(call: Call) -> Reply:
    return Reply(200, call.fake.render.pull(call.repo, _pull(call)))


def pull_files(call: Call) -> Reply:
    """"Responses include a maximum of 3000 files" (GitHub's REST reference)."""
    pull = _pull(call)
    return paginate(call, call.fake.render.pull_files(call.repo, pull)[:3000])


def create_pull(call: Call) -> Reply:
    body = call.json(required=True)
    repo, fake = call.repo, call.fake
    missing = [name for name in ("head", "base", "title") if not body.get(name)]
    if missing:
        raise missing_fields("PullRequest", missing)
    _body_fits("PullRequest", body.get("body"))
    head, base = str(body["head"]), str(body["base"])
    owner, _, branch = head.rpartition(":")
    head_repo = repo if not owner or owner.lower() == repo.owner.lower() else None
    if head_repo is None:
        head_repo = next(
            (
                candidate
                for candidate in fake.repos.values()
                if candidate.owner.lower() == owner.lower() and candidate.fork_of is repo
            ),
            None,
        )
    head_sha = head_repo.branch_sha(branch) if head_repo is not None else None
    base_sha = repo.branch_sha(base)
    if head_repo is None or head_sha is None or base_sha is None:
        errors = [
            {"resource": "PullRequest", "field": name, "code": "invalid"}
            for name, sha in (("head", head_sha), ("base", base_sha))
            if sha is None
        ]
        raise validation_failed(errors)
    label = f"{head_repo.owner}:{branch}"
    for pull in repo.pulls.values():
        if (
            repo.issues[pull.number].state == "open"
            and pull.head_label == label
            and pull.base_ref == base
        ):
            raise validation_failed(
                [
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"A pull request already exists for {label}.",
                    }
                ]
            )
    if fake.store.is_ancestor(head_sha, base_sha):
        raise validation_failed(
            [
                {
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": f"No commits between {base} and {branch}",
                }
            ]
        )
    pull = fake.add_pull(
        repo,
        head_ref=branch,
        head_sha=head_sha,
        base_ref=base,
        head_repo_full_name=head_repo.full_name,
        user_login=call.principal.login,
        title=str(body["title"]),
        body=body.get("body"),
        draft=bool(body.get("draft", False)),
    )
    if "maintainer_can_modify" in body:
        pull.maintainer_can_modify = bool(body["maintainer_can_modify"])
    return Reply(201, fake.render.pull(repo, pull))


def update_pull(call: Call) -> Reply:
    body = call.json()
    pull = _pull(call)
    issue = call.repo.issues[pull.number]
    if "title" in body:
        issue.title = str(body["title"])
    if "body" in body:
        issue.body = _body_fits("PullRequest", body["body"])
    if "base" in body:
        if call.repo.branch_sha(str(body["base"])) is None:
            raise validation_failed(
                [{"resource": "PullRequest", "field": "base", "code": "invalid"}]
            )
        pull.base_ref = str(body["base"])
    if "state" in body:
        if body["state"] not in ("open", "closed"):
            raise validation_failed(
                [{"resource": "PullRequest", "code": "invalid", "field": "state"}]
            )
        if body["state"] != issue.state:
            issue.closed_at = call.fake.clock.stamp() if body["state"] == "closed" else None
        issue.state = body["state"]
    _touch(call, issue)
    return Reply(200, call.fake.render.pull(call.repo, pull))


ROUTES = [
    Route("GET", "/issues", list_issues, permissions=(("issues", "read"),)),
    Route("POST", "/issues", create_issue, permissions=(("issues", "write"),)),
    Route("GET", "/issues/comments/{comment_id}", get_comment, permissions=ISSUES_READ),
    Route("PATCH", "/issues/comments/{comment_id}", update_comment, permissions=ISSUES_WRITE),
    Route("DELETE", "/issues/comments/{comment_id}", delete_comment, permissions=ISSUES_WRITE),
    Route(
        "GET", "/issues/comments/{comment_id}/reactions", list_reactions, permissions=ISSUES_READ
    ),
    Route(
        "POST", "/issues/comments/{comment_id}/reactions", create_reaction, permissions=ISSUES_WRITE
    ),
    Route(
        "DELETE",
        "/issues/comments/{comment_id}/reactions/{reaction_id}",
        delete_reaction,
        permissions=ISSUES_WRITE,
    ),
    Route("GET", "/issues/{issue_number}", get_issue, permissions=ISSUES_READ),
    Route("PATCH", "/issues/{issue_number}", update_issue, permissions=ISSUES_WRITE),
    Route("GET", "/issues/{issue_number}/comments", list_comments, permissions=ISSUES_READ),
    Route("POST", "/issues/{issue_number}/comments", create_comment, permissions=ISSUES_WRITE),
    Route("POST", "/issues/{issue_number}/labels", add_issue_labels, permissions=ISSUES_WRITE),
    Route(
        "DELETE",
        "/issues/{issue_number}/labels/{name}",
        remove_issue_label,
        permissions=ISSUES_WRITE,
    ),
    Route("GET", "/issues/{issue_number}/reactions", list_reactions, permissions=ISSUES_READ),
    Route("POST", "/issues/{issue_number}/reactions", create_reaction, permissions=ISSUES_WRITE),
    Route("GET", "/pulls", list_pulls, permissions=PULLS_READ),
    Route("POST", "/pulls", create_pull, permissions=PULLS_WRITE),
    Route("GET", "/pulls/{pull_number}", get_pull, permissions=PULLS_READ),
    Route("PATCH", "/pulls/{pull_number}", update_pull, permissions=PULLS_WRITE),
    Route("GET", "/pulls/{pull_number}/files", pull_files, permissions=PULLS_READ),
]
