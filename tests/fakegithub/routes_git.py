"""Git Data API: blobs, trees, commits and references."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
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
)
from .gitstore import VALID_MODES, FlatEntry, GitStore, Signature, remove_path, set_path

WORKFLOWS_DIR = ".github/workflows/"
SHA_OR_CONTENT = (
    "Must supply either tree.sha or tree.content. Request will be rejected if both are present."
)
READ = (("contents", "read"),)
WRITE = (("contents", "write"),)


def identity(call: Call) -> Signature:
    """The git identity GitHub uses for commits made by the authenticated principal."""
    user = call.fake.user(call.principal.login or call.fake.bot.login)
    email = f"{user.id}+{user.login}@users.noreply.github.com"
    return Signature(user.login, email, call.fake.clock.stamp())


def changed_workflows(store: GitStore, old_commit: str | None, new_commit: str) -> list[str]:
    """Workflow files that differ between two commits (``old_commit`` None: all of them)."""

    def workflows(commit: str | None) -> dict[str, FlatEntry]:
        if commit is None or store.kind(commit) != "commit":
            return {}
        flat = store.flatten(store.commit(commit).tree)
        return {path: entry for path, entry in flat.items() if path.startswith(WORKFLOWS_DIR)}

    old, new = workflows(old_commit), workflows(new_commit)
    return sorted(path for path in set(old) | set(new) if old.get(path) != new.get(path))


def refuse_workflow_changes(call: Call, paths: list[str], status: int) -> None:
    """GitHub refuses App writes that touch workflow files without ``workflows: write``."""
    if not paths or call.principal.kind != "installation":
        return
    if call.permissions.get("workflows") == "write":
        return
    raise ApiError(
        status,
        f"refusing to allow a GitHub App to create or update workflow `{paths[0]}` "
        "without `workflows` permission",
    )


def signature_from(data: Any, field: str, default: Signature) -> Signature:
    if data is None:
        return default
    if not isinstance(data, Mapping):
        raise invalid_field(
            "Commit", field, f"For 'properties/{field}', {data!r} is not an object."
        )
    missing = [name for name in ("name", "email") if not data.get(name)]
    if missing:
        raise missing_fields("Commit", [f"{field}.{name}" for name in missing])
    return Signature(str(data["name"]), str(data["email"]), str(data.get("date") or default.date))


# -- blobs -------------------------------------------------------------------


def create_blob(call: Call) -> Reply:
    body = call.json(required=True)
    if "content" not in body or not isinstance(body["content"], str):
        raise missing_fields("Blob", ["content"])
    encoding = body.get("encoding", "utf-8")
    if encoding == "utf-8":
        data = body["content"].encode()
    elif encoding == "base64":
        try:
            data = base64.b64decode(body["content"], validate=False)
        except (binascii.Error, ValueError) as exc:
            raise invalid_field("Blob", "content", "content is not valid Base64") from exc
    else:
        raise invalid_field(
            "Blob", "encoding", f"encoding must be utf-8 or base64, got {encoding!r}"
        )
    sha = call.fake.store.put_blob(data)
    return Reply(
        201, {"url": f"{call.fake.render.repo_api(call.repo)}/git/blobs/{sha}", "sha": sha}
    )


def get_blob(call: Call) -> Reply:
    sha = call.params["sha"].lower()
    if call.fake.store.kind(sha) != "blob":
        raise not_found()
    if "application/vnd.github.raw" in call.accept:
        return Reply(
            200, raw=call.fake.store.blob(sha).data, content_type="application/vnd.github.raw"
        )
    return Reply(200, call.fake.render.blob(call.repo, sha))


# -- trees -------------------------------------------------------------------


def _apply_tree_item(store: GitStore, flat: dict[str, FlatEntry], item: Any, index: int) -> None:
    if not isinstance(item, Mapping):
        raise invalid_field("Tree", f"tree[{index}]", f"For 'items', {item!r} is not an object.")
    missing = [name for name in ("path", "mode", "type") if not item.get(name)]
    if missing:
        raise missing_fields("Tree", [f"tree.{name}" for name in missing])
    path, mode, kind = str(item["path"]), str(item["mode"]), str(item["type"])
    if path.startswith("/") or path.endswith("/") or "//" in path:
        raise ApiError(422, f"tree.path contains a malformed path component: {path!r}")
    if mode not in VALID_MODES:
        raise invalid_field("Tree", "tree.mode", f"tree.mode contains an invalid value: {mode}")
    if VALID_MODES[mode] != kind:
        raise invalid_field("Tree", "tree.type", f"tree.type {kind!r} does not match mode {mode}")
    has_content = item.get("content") is not None
    if has_content and item.get("sha") is not None:
        raise ApiError(422, SHA_OR_CONTENT)
    if has_content:
        if kind != "blob":
            raise ApiError(422, f"tree.content can only be used with blobs, not {kind}")
        set_path(flat, path, FlatEntry(mode, "blob", store.put_blob(str(item["content"]).encode())))
        return
    if "sha" not in item:
        raise ApiError(422, SHA_OR_CONTENT)
    sha = item["sha"]
    if sha is None:
        if not remove_path(flat, path):
            raise ApiError(422, "GitRPC::BadObjectState")
        return
    sha = str(sha).lower()
    if kind != "commit" and store.kind(sha) != kind:
        raise ApiError(422, f"tree.sha {sha} is not a valid {kind}")
    if kind == "tree":
        remove_path(flat, path)
        for sub_path, sub_entry in store.flatten(sha, f"{path}/").items():
            set_path(flat, sub_path, sub_entry)
    else:
        set_path(flat, path, FlatEntry(mode, kind, sha))


def create_tree(call: Call) -> Reply:
    body = call.json(required=True)
    items = body.get("tree")
    if not isinstance(items, list):
        raise missing_fields("Tree", ["tree"])
    store = call.fake.store
    flat: dict[str, FlatEntry] = {}
    base_tree = body.get("base_tree")
    if base_tree:
        if store.kind(str(base_tree).lower()) != "tree":
            raise ApiError(422, "base_tree is not a valid tree oid")
        flat = store.flatten(str(base_tree).lower())
    # GitHub refuses a tree of a workflow file to an App without `workflows: write`, with its plain 403 (the
    # permission's name is not in it: claude-code-action#29, github/docs#4770); its pushes say why (`create_ref`)
    workflows = [str(item.get("path")) for item in items if isinstance(item, Mapping)
                 and str(item.get("path") or "").startswith(WORKFLOWS_DIR)]
    if workflows and call.principal.kind == "installation" and call.permissions.get("workflows") != "write":
        raise ApiError(403, "Resource not accessible by integration",
                       documentation_url="https://docs.github.com/rest/git/trees#create-a-tree")
    for index, item in enumerate(items):
        _apply_tree_item(store, flat, item, index)
    sha = store.build_tree(flat)
    return Reply(201, call.fake.render.git_tree(call.repo, sha))


def get_tree(call: Call) -> Reply:
    store = call.fake.store
    key = call.params["tree_sha"]
    sha: str | None = key.lower() if store.kind(key.lower()) == "tree" else None
    if sha is None:
        commit = key.lower() if store.kind(key.lower()) == "commit" else call.repo.resolve(key)
        sha = store.commit(commit).tree if commit else None
    if sha is None:
        raise not_found()
    # GitHub recurses for *any* value of ``recursive`` (even 0 or false).
    recursive = "recursive" in call.query
    return Reply(200, call.fake.render.git_tree(call.repo, sha, recursive=recursive))


# -- commits ------------------------------------------------------------------


def create_commit(call: Call) -> Reply:
    body = call.json(required=True)
    missing = [name for name in ("message", "tree") if not body.get(name)]
    if missing:
        raise missing_fields("Commit", missing)
    store = call.fake.store
    tree = str(body["tree"]).lower()
    if store.kind(tree) != "tree":
        raise ApiError(422, "Tree SHA does not exist")
    parents = body.get("parents") or []
    if not isinstance(parents, list):
        raise invalid_field(
            "Commit", "parents", "For 'properties/parents', parents is not an array."
        )
    parents = [str(parent).lower() for parent in parents]
    if any(store.kind(parent) != "commit" for parent in parents):
        raise ApiError(422, "Parent SHA does not exist or is not a commit object")
    me = identity(call)
    author = signature_from(body.get("author"), "author", me)
    committer = signature_from(
        body.get("committer"), "committer", author if body.get("author") else me
    )
    sha = store.put_commit(
        tree=tree,
        parents=parents,
        author=author,
        committer=committer,
        message=str(body["message"]),
    )
    return Reply(201, call.fake.render.git_commit(call.repo, sha))


def get_commit(call: Call) -> Reply:
    sha = call.params["commit_sha"].lower()
    if call.fake.store.kind(sha) != "commit":
        raise not_found()
    return Reply(200, call.fake.render.git_commit(call.repo, sha))


# -- references -----------------------------------------------------------------


def _full_ref(call: Call) -> str:
    ref = call.params["ref"]
    return ref if ref.startswith("refs/") else f"refs/{ref}"


def get_ref(call: Call) -> Reply:
    ref = _full_ref(call)
    sha = call.repo.refs.get(ref)
    if sha is None and call.repo.is_empty():  # as GitHub answers the git refs of a repository with no commit
        raise ApiError(409, "Git Repository is empty.")
    if sha is None:
        raise not_found()
    return Reply(200, call.fake.render.git_ref(call.repo, ref, sha))


def list_refs(call: Call) -> Reply:
    """Legacy ``GET git/refs[/{ref}]``: one object on an exact match, else a prefix list."""
    repo = call.repo
    prefix = _full_ref(call) if call.params.get("ref") else "refs/"
    if prefix in repo.refs:
        return Reply(200, call.fake.render.git_ref(repo, prefix, repo.refs[prefix]))
    found = [
        call.fake.render.git_ref(repo, ref, sha)
        for ref, sha in sorted(repo.refs.items())
        if ref.startswith(prefix if prefix.endswith("/") else f"{prefix}/")
    ]
    if not found:
        raise not_found()
    return paginate(call, found)


def matching_refs(call: Call) -> Reply:
    repo = call.repo
    prefix = f"refs/{call.params.get('ref', '')}"
    found = [
        call.fake.render.git_ref(repo, ref, sha)
        for ref, sha in sorted(repo.refs.items())
        if ref.startswith(prefix)
    ]
    return paginate(call, found)


def create_ref(call: Call) -> Reply:
    body = call.json(required=True)
    repo = call.repo
    ref = require_str(body, "ref", "Reference")
    sha = require_str(body, "sha", "Reference").lower()
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise ApiError(
            422,
            f"{ref} is not a valid ref name. Reference name must start with 'refs/' "
            "and have at least two slashes.",
        )
    if repo.is_empty():
        raise ApiError(409, "Git Repository is empty.")
    if ref in repo.refs:
        raise ApiError(422, "Reference already exists")
    if sha not in call.fake.store:
        raise ApiError(422, "Object does not exist")
    refuse_workflow_changes(
        call, changed_workflows(call.fake.store, repo.branch_sha(repo.default_branch), sha), 422
    )
    repo.set_ref(ref, sha)
    return Reply(201, call.fake.render.git_ref(repo, ref, sha))


def update_ref(call: Call) -> Reply:
    body = call.json(required=True)
    repo = call.repo
    ref = _full_ref(call)
    sha = require_str(body, "sha", "Reference").lower()
    force = body.get("force", False) is True
    old = repo.refs.get(ref)
    if old is None:
        raise ApiError(422, "Reference does not exist")
    store = call.fake.store
    if sha not in store:
        raise ApiError(422, "Object does not exist")
    if not force and not store.is_ancestor(old, sha):
        raise ApiError(422, "Update is not a fast forward")
    refuse_workflow_changes(call, changed_workflows(store, old, sha), 422)
    repo.set_ref(ref, sha)
    return Reply(200, call.fake.render.git_ref(repo, ref, sha))


def delete_ref(call: Call) -> Reply:
    ref = _full_ref(call)
    if ref not in call.repo.refs:
        raise ApiError(422, "Reference does not exist")
    call.repo.set_ref(ref, None)
    return Reply.empty()


ROUTES = [
    Route("POST", "/git/blobs", create_blob, permissions=WRITE),
    Route("GET", "/git/blobs/{sha}", get_blob, permissions=READ),
    Route("POST", "/git/trees", create_tree, permissions=WRITE),
    Route("GET", "/git/trees/{tree_sha*}", get_tree, permissions=READ),
    Route("POST", "/git/commits", create_commit, permissions=WRITE),
    Route("GET", "/git/commits/{commit_sha}", get_commit, permissions=READ),
    Route("GET", "/git/ref/{ref*}", get_ref, permissions=READ),
    Route("GET", "/git/refs", list_refs, permissions=READ),
    Route("GET", "/git/refs/{ref*}", list_refs, permissions=READ),
    Route("GET", "/git/matching-refs", matching_refs, permissions=READ),
    Route("GET", "/git/matching-refs/{ref*}", matching_refs, permissions=READ),
    Route("POST", "/git/refs", create_ref, permissions=WRITE),
    Route("PATCH", "/git/refs/{ref*}", update_ref, permissions=WRITE),
    Route("DELETE", "/git/refs/{ref*}", delete_ref, permissions=WRITE),
]
