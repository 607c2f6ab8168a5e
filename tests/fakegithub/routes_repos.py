"""Repositories, contents, branches, commits, collaborators and labels."""

from __future__ import annotations

import base64
import binascii
import difflib
import posixpath
from typing import Any

from .api import (
    ApiError,
    Call,
    Reply,
    Route,
    invalid_field,
    missing_fields,
    not_found,
    paginate,
    require_str,
    validation_failed,
)
from .gitstore import FILE_MODE, SYMLINK_MODE, TREE_MODE, FlatEntry, TreeEntry
from .render import template
from .routes_git import WORKFLOWS_DIR, identity, refuse_workflow_changes, signature_from
from .templates import project

METADATA = (("metadata", "read"),)
CONTENTS_READ = (("contents", "read"),)
CONTENTS_WRITE = (("contents", "write"),)
ISSUES_READ = (("issues", "read"), ("pull_requests", "read"))
ISSUES_WRITE = (("issues", "write"), ("pull_requests", "write"))


def get_repo(call: Call) -> Reply:
    return Reply(200, call.fake.render.repo_full(call.repo))


# -- contents -----------------------------------------------------------------


def _commit_for(call: Call, ref: str) -> str:
    sha = call.repo.resolve(ref)
    if sha is None:
        if call.repo.is_empty():
            raise ApiError(404, "This repository is empty.")
        raise ApiError(404, f"No commit found for the ref {ref}")
    return sha


def get_contents(call: Call) -> Reply:
    repo, store, render = call.repo, call.fake.store, call.fake.render
    path = call.params.get("path", "").strip("/")
    ref = call.query.get("ref") or repo.default_branch
    tree = store.commit(_commit_for(call, ref)).tree
    entry = store.lookup(tree, path) if path else TreeEntry("", TREE_MODE, "tree", tree)
    if entry is None:
        raise not_found()
    if entry.type == "tree":
        items = [
            render.content_entry(repo, posixpath.join(path, child.name), child, ref)
            for child in store.tree(entry.sha).entries
        ]
        if "application/vnd.github.object" in call.accept:
            listing: dict[str, Any] = {
                "type": "dir",
                "size": 0,
                "name": posixpath.basename(path),
                "path": path,
                "sha": entry.sha,
                **render.content_urls(repo, path, entry.sha, ref, "dir"),
                "entries": items,
            }
            return Reply(200, listing)
        return Reply(200, items)
    if entry.mode == SYMLINK_MODE:
        target = posixpath.normpath(
            posixpath.join(
                posixpath.dirname(path), store.blob(entry.sha).data.decode("utf-8", "replace")
            )
        )
        resolved = store.lookup(tree, target) if not target.startswith("..") else None
        if resolved is None or resolved.type != "blob" or resolved.mode == SYMLINK_MODE:
            return Reply(200, render.content_special(repo, path, entry, ref))
        path, entry = target, resolved
    if entry.type == "commit":
        return Reply(200, render.content_special(repo, path, entry, ref))
    if (
        "application/vnd.github.raw" in call.accept
        or "application/vnd.github.v3.raw" in call.accept
    ):
        return Reply(
            200,
            raw=store.blob(entry.sha).data,
            content_type="application/vnd.github.raw; charset=utf-8",
            headers={"x-github-media-type": "github.v3; param=raw"},
        )
    return Reply(200, render.content_file(repo, path, entry, ref))


def _write_file(call: Call, *, delete: bool) -> Reply:
    body = call.json(required=True)
    repo, store, render = call.repo, call.fake.store, call.fake.render
    path = call.params["path"].strip("/")
    required = ["message", "sha"] if delete else ["message", "content"]
    # An empty string is valid content (an empty file), but not a valid message or sha.
    missing = [
        name
        for name in required
        if body.get(name) is None or (name != "content" and body.get(name) == "")
    ]
    if missing:
        raise missing_fields("Contents", missing)
    data = b""
    if not delete:
        try:
            data = base64.b64decode(str(body["content"]), validate=False)
        except (binascii.Error, ValueError) as exc:
            raise invalid_field("Contents", "content", "content is not valid Base64") from exc
    branch = str(body.get("branch") or repo.default_branch)
    parent = repo.branch_sha(branch)
    if parent is None and not (repo.is_empty() and branch == repo.default_branch and not delete):
        raise ApiError(404, f"Branch {branch} not found")
    flat = store.flatten(store.commit(parent).tree) if parent else {}
    existing = flat.get(path)
    given_sha = body.get("sha")
    if delete and existing is None:
        raise not_found()
    if existing is not None and not given_sha:
        raise missing_fields("Contents", ["sha"])
    if existing is not None and given_sha != existing.sha:
        raise ApiError(409, f"{path} does not match {given_sha}")
    if path.startswith(WORKFLOWS_DIR):
        refuse_workflow_changes(call, [path], 403)
    if delete:
        del flat[path]
    else:
        mode = existing.mode if existing is not None else FILE_MODE
        flat[path] = FlatEntry(mode, "blob", store.put_blob(data))
    me = identity(call)
    author = signature_from(body.get("author"), "author", me)
    committer = signature_from(
        body.get("committer"), "committer", author if body.get("author") else me
    )
    commit_sha = store.put_commit(
        tree=store.build_tree(flat),
        parents=[parent] if parent else [],
        author=author,
        committer=committer,
        message=str(body["message"]),
    )
    repo.set_ref(f"refs/heads/{branch}", commit_sha)
    commit = project(
        template("repos.create-or-update-file-contents.200.example-for-updating-a-file", "commit"),
        render.git_commit(repo, commit_sha),
    )
    if delete:
        return Reply(200, {"content": None, "commit": commit})
    entry = TreeEntry(posixpath.basename(path), flat[path].mode, "blob", flat[path].sha)
    content = project(
        template("repos.create-or-update-file-contents.201.example-for-creating-a-file", "content"),
        render.content_file(repo, path, entry, branch),
    )
    return Reply(201 if existing is None else 200, {"content": content, "commit": commit})


def put_contents(call: Call) -> Reply:
    return _write_file(call, delete=False)


def delete_contents(call: Call) -> Reply:
    return _write_file(call, delete=True)


# -- branches and commits ---------------------------------------------------------


def get_branch(call: Call) -> Reply:
    name = call.params["branch"]
    sha = call.repo.branch_sha(name)
    if sha is None:
        raise ApiError(404, "Branch not found")
    return Reply(200, call.fake.render.branch(call.repo, name, sha))


def branch_rules(call: Call) -> Reply:
    return paginate(call, call.fake.render.branch_rules(call.repo, call.params["branch"]))


def list_branches(call: Call) -> Reply:
    repo = call.repo
    branches = [
        {
            "name": ref.removeprefix("refs/heads/"),
            "commit": {"sha": sha, "url": f"{call.fake.render.repo_api(repo)}/commits/{sha}"},
            "protected": False,
        }
        for ref, sha in sorted(repo.refs.items())
        if ref.startswith("refs/heads/")
    ]
    return paginate(call, branches)


def get_commit(call: Call) -> Reply:
    ref = call.params["ref"]
    sha = call.repo.resolve(ref)
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}")
    return Reply(200, call.fake.render.commit(call.repo, sha))


def compare(call: Call) -> Reply:
    """`GET /compare/{base}...{head}`: how head stands against base, and the files head's
    commits change since their merge base (GitHub lists at most 300). No common history: 404."""
    base_ref, dots, head_ref = call.params["basehead"].partition("...")
    repo, store = call.repo, call.fake.store
    base, head = repo.resolve(base_ref), repo.resolve(head_ref) if dots else None
    if base is None or head is None:
        raise not_found()
    base_history, head_history = store.ancestors(base), store.ancestors(head)
    common = base_history & head_history
    if not common:
        raise ApiError(404, f"No common ancestor between {base_ref} and {head_ref}.")
    merge_base = max(common, key=lambda sha: len(store.ancestors(sha)))  # the nearest: the most history
    before = store.flatten(store.commit(merge_base).tree)
    after = store.flatten(store.commit(head).tree)
    files = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        old_lines = store.blob(old.sha).data.decode(errors="replace").splitlines() if old else []
        new_lines = store.blob(new.sha).data.decode(errors="replace").splitlines() if new else []
        added = removed = 0
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
            removed += (i2 - i1) if tag in ("replace", "delete") else 0
            added += (j2 - j1) if tag in ("replace", "insert") else 0
        files.append({"sha": (new or old).sha, "filename": path,  # type: ignore[union-attr]
                      "status": "added" if old is None else "removed" if new is None else "modified",
                      "additions": added, "deletions": removed, "changes": added + removed})
    status = "identical" if base == head else "ahead" if base in head_history else \
        "behind" if head in base_history else "diverged"
    render = call.fake.render
    return Reply(200, {"status": status, "ahead_by": len(head_history - base_history),
                       "behind_by": len(base_history - head_history), "total_commits": len(head_history - base_history),
                       "base_commit": render.commit(repo, base), "merge_base_commit": render.commit(repo, merge_base),
                       "files": files[:300]})


def commit_pulls(call: Call) -> Reply:
    """Pull requests whose head contains the commit. As on GitHub, the head commits
    of an open pull request from a fork are not associated with it: they live in
    the fork until merged (see README: "What the fake does not do")."""
    repo, store = call.repo, call.fake.store
    sha = call.params["commit_sha"].lower()
    found = []
    for pull in sorted(repo.pulls.values(), key=lambda p: p.number, reverse=True):
        if pull.head_repo is not repo and not pull.merged:
            continue
        base = repo.branch_sha(pull.base_ref)
        introduced = store.ancestors(pull.head_sha) - (store.ancestors(base) if base else set())
        if pull.head_sha == sha or sha in introduced:
            found.append(call.fake.render.pull(repo, pull, simple=True))
    return paginate(call, found)


# -- collaborators ----------------------------------------------------------------


def collaborator_permission(call: Call) -> Reply:
    login = call.params["username"]
    if login.lower() not in call.fake.users:
        raise ApiError(404, f"{login} is not a user")
    return Reply(200, call.fake.render.permission(call.repo, login))


# -- labels -----------------------------------------------------------------------


def list_labels(call: Call) -> Reply:
    repo = call.repo
    return paginate(call, [call.fake.render.label(repo, label) for label in repo.labels.values()])


def get_label(call: Call) -> Reply:
    label = call.fake.label(call.repo, call.params["name"])
    if label is None:
        raise not_found()
    return Reply(200, call.fake.render.label(call.repo, label))


def create_label(call: Call) -> Reply:
    body = call.json(required=True)
    name = require_str(body, "name", "Label")
    if call.fake.label(call.repo, name) is not None:
        raise validation_failed([{"resource": "Label", "code": "already_exists", "field": "name"}])
    label = call.fake.add_label(
        call.repo, name, str(body.get("color") or "ededed").lstrip("#"), body.get("description")
    )
    return Reply(201, call.fake.render.label(call.repo, label))


ROUTES = [
    Route("GET", "", get_repo, permissions=METADATA),
    Route("GET", "/contents", get_contents, permissions=CONTENTS_READ),
    Route("GET", "/contents/{path*}", get_contents, permissions=CONTENTS_READ),
    Route("PUT", "/contents/{path*}", put_contents, permissions=CONTENTS_WRITE),
    Route("DELETE", "/contents/{path*}", delete_contents, permissions=CONTENTS_WRITE),
    Route("GET", "/branches", list_branches, permissions=CONTENTS_READ),
    Route("GET", "/branches/{branch*}", get_branch, permissions=CONTENTS_READ),
    Route("GET", "/rules/branches/{branch*}", branch_rules, permissions=METADATA),
    Route(
        "GET", "/commits/{commit_sha}/pulls", commit_pulls, permissions=(("pull_requests", "read"),)
    ),
    Route("GET", "/commits/{ref*}", get_commit, permissions=CONTENTS_READ),
    Route("GET", "/compare/{basehead*}", compare, permissions=CONTENTS_READ),
    Route(
        "GET", "/collaborators/{username}/permission", collaborator_permission, permissions=METADATA
    ),
    Route("GET", "/labels", list_labels, permissions=ISSUES_READ),
    Route("GET", "/labels/{name}", get_label, permissions=ISSUES_READ),
    Route("POST", "/labels", create_label, permissions=ISSUES_WRITE),
]
