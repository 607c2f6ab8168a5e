"""State → GitHub JSON, using the official example responses as templates.

Each object starts from the matching example (so it has every field, in GitHub's
order), then gets the fake's values. URLs point at the fake's base URL (API) and
at ``html_url`` (web pages, ``https://github.com`` by default).
"""

from __future__ import annotations

import base64
import copy
import difflib
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from .gitstore import TreeEntry
from .state import (
    REACTION_CONTENTS,
    ROLE_RANK,
    ROLE_TO_PERMISSION,
    Comment,
    Installation,
    Issue,
    Label,
    Pull,
    Reaction,
    Repo,
    User,
    Workflow,
    node_id,
)
from .templates import EXAMPLE_API, EXAMPLE_HTML, example, project, rebase

if TYPE_CHECKING:
    from .world import GitHubState

LARGE_FILE = 1024 * 1024


@cache
def _template(name: str, *keys: str) -> Any:
    value = example(name)
    for key in keys:
        value = value[key]
    return value


def template(name: str, *keys: str) -> Any:
    """A deep copy of (a part of) an example response."""
    return copy.deepcopy(_template(name, *keys))


def wrap_base64(data: bytes) -> str:
    """Base64 with a newline after every 60 characters, as the contents API sends it."""
    encoded = base64.b64encode(data).decode()
    return "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))


def ordered(template_obj: Mapping[str, Any], full: Mapping[str, Any]) -> dict[str, Any]:
    """Template keys first (in order), then any extra keys of ``full``."""
    out = project(template_obj, full)
    out.update({key: value for key, value in full.items() if key not in out})
    return out


class Renderer:
    def __init__(self, state: GitHubState) -> None:
        self.state = state

    @property
    def api(self) -> str:
        return self.state.base_url

    @property
    def html(self) -> str:
        return self.state.html_url

    def repo_api(self, repo: Repo) -> str:
        return f"{self.api}/repos/{repo.full_name}"

    def repo_html(self, repo: Repo) -> str:
        return f"{self.html}/{repo.full_name}"

    # -- users -------------------------------------------------------------

    def user(self, login: str | None) -> dict[str, Any] | None:
        if login is None:
            return None
        user = self.state.user(login)
        body: dict[str, Any] = template("actions.get-workflow-run.200", "actor")
        kind = "users" if user.type != "Organization" else "orgs"
        body = rebase(body, [(f"{EXAMPLE_API}/users/octocat", f"{self.api}/users/{user.login}")])
        body.update(
            login=user.login,
            id=user.id,
            node_id=node_id(user.type, user.id),
            avatar_url=f"https://avatars.githubusercontent.com/u/{user.id}?v=4",
            url=f"{self.api}/{kind}/{user.login}",
            html_url=self._user_html(user),
            type=user.type,
            site_admin=False,
        )
        body["user_view_type"] = "public"
        return body

    def _user_html(self, user: User) -> str:
        if user.type == "Bot" and user.login.endswith("[bot]"):
            return f"{self.html}/apps/{user.login.removesuffix('[bot]')}"
        return f"{self.html}/{user.login}"

    def author_association(self, repo: Repo, login: str) -> str:
        user = self.state.user(login)
        if user.type == "Bot":
            return "NONE"
        if login.lower() == repo.owner.lower():
            return "OWNER"
        role = repo.role_of(login)
        if role is None:
            return "NONE"
        return "MEMBER" if self.state.user(repo.owner).type == "Organization" else "COLLABORATOR"

    # -- repositories --------------------------------------------------------

    def repo_full(self, repo: Repo) -> dict[str, Any]:
        body: dict[str, Any] = template("repos.get.200.default-response")
        host = urlsplit(self.html).netloc
        full = repo.full_name
        body = rebase(
            body,
            [
                (f"{EXAMPLE_API}/repos/octocat/Hello-World", f"{self.api}/repos/{full}"),
                ("http://api.github.com/repos/octocat/Hello-World", f"{self.api}/repos/{full}"),
                (f"{EXAMPLE_HTML}/octocat/Hello-World", f"{self.html}/{full}"),
                ("git:github.com/octocat/Hello-World.git", f"git://{host}/{full}.git"),
                ("git@github.com:octocat/Hello-World.git", f"git@{host}:{full}.git"),
                ("https://svn.github.com/octocat/Hello-World", f"{self.html}/{full}"),
            ],
        )
        open_issues = sum(1 for issue in repo.issues.values() if issue.state == "open")
        body.update(
            id=repo.id,
            node_id=node_id("Repository", repo.id),
            name=repo.name,
            full_name=full,
            owner=self.user(repo.owner),
            private=repo.private,
            visibility="private" if repo.private else "public",
            description=repo.description,
            fork=repo.fork_of is not None,
            homepage=None,
            mirror_url=None,
            language=None,
            default_branch=repo.default_branch,
            forks_count=0,
            forks=0,
            stargazers_count=0,
            watchers_count=0,
            watchers=0,
            subscribers_count=0,
            network_count=0,
            open_issues_count=open_issues,
            has_issues=repo.has_issues,
            archived=repo.archived,
            open_issues=open_issues,
            topics=[],
            is_template=False,
            license=None,
            created_at=repo.created_at,
            updated_at=repo.created_at,
            pushed_at=repo.created_at,
        )
        for key in ("template_repository", "temp_clone_token", "permissions", "parent", "source"):
            body.pop(key, None)
        if self.state.user(repo.owner).type == "Organization":
            body["organization"] = self.user(repo.owner)
        else:
            body.pop("organization", None)
        if repo.fork_of is not None:
            parent = self.repo_like(
                repo.fork_of, template("repos.get.200.default-response", "parent")
            )
            body["parent"] = parent
            body["source"] = parent
        return body

    def repo_like(self, repo: Repo, shape: Mapping[str, Any]) -> dict[str, Any]:
        """``repo`` with exactly the keys of a (smaller) repository template."""
        return project(shape, self.repo_full(repo))

    def repo_minimal(self, repo: Repo) -> dict[str, Any]:
        return self.repo_like(repo, _template("actions.get-workflow-run.200", "repository"))

    # -- labels, issues, comments, reactions ------------------------------------

    def label(self, repo: Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": node_id("Label", label.id),
            "url": f"{self.repo_api(repo)}/labels/{quote(label.name, safe='')}",
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": label.default,
        }

    def labels_of(self, repo: Repo, names: list[str]) -> list[dict[str, Any]]:
        found = [self.state.label(repo, name) for name in names]
        return [self.label(repo, label) for label in found if label is not None]

    def reaction_rollup(self, url: str, reactions: list[Reaction]) -> dict[str, Any]:
        rollup: dict[str, Any] = {"url": url, "total_count": len(reactions)}
        for content in REACTION_CONTENTS:
            rollup[content] = sum(1 for reaction in reactions if reaction.content == content)
        return rollup

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        api = f"{self.repo_api(repo)}/issues/{issue.number}"
        kind = "pull" if issue.is_pull else "issues"
        body: dict[str, Any] = {
            "url": api,
            "repository_url": self.repo_api(repo),
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": f"{self.repo_html(repo)}/{kind}/{issue.number}",
            "id": issue.id,
            "node_id": node_id("Issue", issue.id),
            "number": issue.number,
            "title": issue.title,
            "user": self.user(issue.user),
            "labels": self.labels_of(repo, issue.labels),
            "state": issue.state,
            "locked": issue.locked,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len(issue.comment_ids),
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "author_association": self.author_association(repo, issue.user),
            "active_lock_reason": issue.active_lock_reason,
            "body": issue.body,
            "reactions": self.reaction_rollup(f"{api}/reactions", issue.reactions),
            "timeline_url": f"{api}/timeline",
            "performed_via_github_app": None,
            "state_reason": issue.state_reason,
        }
        if issue.is_pull:
            pull = repo.pulls[issue.number]
            pull_html = f"{self.repo_html(repo)}/pull/{issue.number}"
            body["draft"] = pull.draft
            body["pull_request"] = {
                "url": f"{self.repo_api(repo)}/pulls/{issue.number}",
                "html_url": pull_html,
                "diff_url": f"{pull_html}.diff",
                "patch_url": f"{pull_html}.patch",
                "merged_at": None,
            }
        return body

    def comment(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        issue = repo.issues[comment.issue_number]
        kind = "pull" if issue.is_pull else "issues"
        api = f"{self.repo_api(repo)}/issues/comments/{comment.id}"
        full = {
            "id": comment.id,
            "node_id": node_id("IssueComment", comment.id),
            "url": api,
            "html_url": f"{self.repo_html(repo)}/{kind}/{issue.number}#issuecomment-{comment.id}",
            "body": comment.body,
            "user": self.user(comment.user),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "issue_url": f"{self.repo_api(repo)}/issues/{issue.number}",
            "author_association": self.author_association(repo, comment.user),
            "pin": None,
            "minimized": None,
            "performed_via_github_app": None,
            "reactions": self.reaction_rollup(f"{api}/reactions", comment.reactions),
        }
        return ordered(_template("issues.get-comment.200"), full)

    def reaction(self, reaction: Reaction) -> dict[str, Any]:
        full = {
            "id": reaction.id,
            "node_id": node_id("Reaction", reaction.id),
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": reaction.created_at,
        }
        return ordered(_template("reactions.create-for-issue-comment.201"), full)

    # -- pull requests -------------------------------------------------------

    def pull(self, repo: Repo, pull: Pull, *, simple: bool = False) -> dict[str, Any]:
        issue = repo.issues[pull.number]
        api = f"{self.repo_api(repo)}/pulls/{pull.number}"
        issue_api = f"{self.repo_api(repo)}/issues/{pull.number}"
        html = f"{self.repo_html(repo)}/pull/{pull.number}"
        statuses = f"{self.repo_api(repo)}/statuses/{pull.head_sha}"
        base_sha = repo.branch_sha(pull.base_ref) or pull.head_sha
        files = self.pull_files(repo, pull)
        full: dict[str, Any] = {
            "url": api,
            "id": pull.id,
            "node_id": node_id("PullRequest", pull.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_api,
            "commits_url": f"{api}/commits",
            "review_comments_url": f"{api}/comments",
            "review_comment_url": f"{self.repo_api(repo)}/pulls/comments{{/number}}",
            "comments_url": f"{issue_api}/comments",
            "statuses_url": statuses,
            "number": pull.number,
            "state": issue.state,
            "locked": issue.locked,
            "title": issue.title,
            "user": self.user(issue.user),
            "body": issue.body,
            "labels": self.labels_of(repo, issue.labels),
            "milestone": None,
            "active_lock_reason": issue.active_lock_reason,
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "merged_at": issue.closed_at if pull.merged else None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self._pull_end(pull.head_repo, pull.head_ref, pull.head_sha, "head"),
            "base": self._pull_end(repo, pull.base_ref, base_sha, "base"),
            "_links": {
                "self": {"href": api},
                "html": {"href": html},
                "issue": {"href": issue_api},
                "comments": {"href": f"{issue_api}/comments"},
                "review_comments": {"href": f"{api}/comments"},
                "review_comment": {"href": f"{self.repo_api(repo)}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/commits"},
                "statuses": {"href": statuses},
            },
            "author_association": self.author_association(repo, issue.user),
            "auto_merge": None,
            "draft": pull.draft,
            "merged": pull.merged,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "merged_by": None,
            "comments": len(issue.comment_ids),
            "review_comments": 0,
            "maintainer_can_modify": pull.maintainer_can_modify,
            "commits": self._commit_count(base_sha, pull.head_sha),
            "additions": sum(int(f.get("additions", 0)) for f in files),
            "deletions": sum(int(f.get("deletions", 0)) for f in files),
            "changed_files": len(files),
        }
        shape = _template("pulls.list.200")[0] if simple else _template("pulls.get.200")
        return project(shape, full)

    def _pull_end(self, repo: Repo, ref: str, sha: str, side: str) -> dict[str, Any]:
        shape = _template("pulls.get.200", side, "repo")
        return {
            "label": f"{repo.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.user(repo.owner),
            "repo": self.repo_like(repo, shape),
        }

    def pull_minimal(self, repo: Repo, pull: Pull) -> dict[str, Any]:
        """The ``pull_requests`` items of a workflow run."""

        def end(target: Repo, ref: str, sha: str) -> dict[str, Any]:
            return {
                "ref": ref,
                "sha": sha,
                "repo": {"id": target.id, "url": self.repo_api(target), "name": target.name},
            }

        return {
            "url": f"{self.repo_api(repo)}/pulls/{pull.number}",
            "id": pull.id,
            "number": pull.number,
            "head": end(pull.head_repo, pull.head_ref, pull.head_sha),
            "base": end(repo, pull.base_ref, repo.branch_sha(pull.base_ref) or pull.head_sha),
        }

    def _commit_count(self, base_sha: str, head_sha: str) -> int:
        store = self.state.store
        if store.kind(head_sha) != "commit":
            return 1
        return max(len(store.ancestors(head_sha) - store.ancestors(base_sha)), 0)

    def pull_files(self, repo: Repo, pull: Pull) -> list[dict[str, Any]]:
        if pull.files is not None:
            return [self._diff_entry(pull.head_repo, pull.head_sha, entry) for entry in pull.files]
        base_sha = repo.branch_sha(pull.base_ref)
        return self.diff(pull.head_repo, base_sha, pull.head_sha)

    def _diff_entry(self, repo: Repo, sha: str, entry: Mapping[str, Any]) -> dict[str, Any]:
        filename = str(entry["filename"])
        blob = None
        if self.state.store.kind(sha) == "commit":
            found = self.state.store.lookup(self.state.store.commit(sha).tree, filename)
            blob = found.sha if found is not None else None
        full = {
            "sha": blob or entry.get("sha"),
            "filename": filename,
            "status": entry.get("status", "modified"),
            "additions": 0,
            "deletions": 0,
            "changes": 0,
            **self._file_urls(repo, sha, filename),
        }
        full.update(entry)
        full["changes"] = int(full["additions"]) + int(full["deletions"])
        return full

    def _file_urls(self, repo: Repo, sha: str, path: str) -> dict[str, str]:
        quoted = quote(path)
        return {
            "blob_url": f"{self.repo_html(repo)}/blob/{sha}/{quoted}",
            "raw_url": f"{self.repo_html(repo)}/raw/{sha}/{quoted}",
            "contents_url": f"{self.repo_api(repo)}/contents/{quoted}?ref={sha}",
        }

    def diff(self, repo: Repo, base_sha: str | None, head_sha: str) -> list[dict[str, Any]]:
        """Diff entries between two commits (``base_sha`` None: everything is added)."""
        store = self.state.store
        if store.kind(head_sha) != "commit":
            return []
        new = store.flatten(store.commit(head_sha).tree)
        old = (
            store.flatten(store.commit(base_sha).tree)
            if base_sha and store.kind(base_sha) == "commit"
            else {}
        )
        entries: list[dict[str, Any]] = []
        for path in sorted(set(old) | set(new)):
            before, after = old.get(path), new.get(path)
            if before == after:
                continue
            status = "added" if before is None else "removed" if after is None else "modified"
            old_text = self._blob_lines(before.sha) if before and before.type == "blob" else []
            new_text = self._blob_lines(after.sha) if after and after.type == "blob" else []
            patch_lines = list(difflib.unified_diff(old_text, new_text, lineterm="", n=3))[2:]
            additions = sum(1 for line in patch_lines if line.startswith("+"))
            deletions = sum(1 for line in patch_lines if line.startswith("-"))
            entries.append(
                {
                    "sha": (after or before).sha,  # type: ignore[union-attr]
                    "filename": path,
                    "status": status,
                    "additions": additions,
                    "deletions": deletions,
                    "changes": additions + deletions,
                    **self._file_urls(repo, head_sha, path),
                    "patch": "\n".join(patch_lines),
                }
            )
        return entries

    def _blob_lines(self, sha: str) -> list[str]:
        return self.state.store.blob(sha).data.decode("utf-8", errors="replace").splitlines()

    # -- collaborators ---------------------------------------------------------

    def permission(self, repo: Repo, login: str) -> dict[str, Any]:
        role = repo.role_of(login)
        if role is None:
            role = "none" if repo.private else "read"
        legacy = ROLE_TO_PERMISSION.get(role, "none")
        user = self.user(login) or {}
        rank = ROLE_RANK[role]
        user["permissions"] = {
            "admin": rank >= ROLE_RANK["admin"],
            "maintain": rank >= ROLE_RANK["maintain"],
            "push": rank >= ROLE_RANK["write"],
            "triage": rank >= ROLE_RANK["triage"],
            "pull": rank >= ROLE_RANK["read"],
        }
        user["role_name"] = role
        return {"permission": legacy, "role_name": role, "user": user}

    # -- git data -----------------------------------------------------------

    def git_ref(self, repo: Repo, ref: str, sha: str) -> dict[str, Any]:
        kind = self.state.store.kind(sha) or "commit"
        return {
            "ref": ref,
            "node_id": node_id("Ref", ref),
            "url": f"{self.repo_api(repo)}/git/{ref}",
            "object": {
                "sha": sha,
                "type": kind,
                "url": f"{self.repo_api(repo)}/git/{kind}s/{sha}",
            },
        }

    def signature(self, signature: Any) -> dict[str, str]:
        return {"name": signature.name, "email": signature.email, "date": signature.date}

    def git_commit(self, repo: Repo, sha: str) -> dict[str, Any]:
        commit = self.state.store.commit(sha)
        full = {
            "sha": sha,
            "node_id": node_id("Commit", sha),
            "url": f"{self.repo_api(repo)}/git/commits/{sha}",
            "html_url": f"{self.repo_html(repo)}/commit/{sha}",
            "author": self.signature(commit.author),
            "committer": self.signature(commit.committer),
            "tree": {"sha": commit.tree, "url": f"{self.repo_api(repo)}/git/trees/{commit.tree}"},
            "message": commit.message,
            "parents": [
                {
                    "sha": parent,
                    "url": f"{self.repo_api(repo)}/git/commits/{parent}",
                    "html_url": f"{self.repo_html(repo)}/commit/{parent}",
                }
                for parent in commit.parents
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }
        return ordered(_template("git.get-commit.200"), full)

    def tree_entry(self, repo: Repo, path: str, entry: TreeEntry) -> dict[str, Any]:
        item: dict[str, Any] = {
            "path": path,
            "mode": entry.mode,
            "type": entry.type,
            "sha": entry.sha,
        }
        if entry.type == "blob":
            item["size"] = len(self.state.store.blob(entry.sha).data)
        if entry.type != "commit":
            item["url"] = f"{self.repo_api(repo)}/git/{entry.type}s/{entry.sha}"
        return item

    def git_tree(self, repo: Repo, sha: str, *, recursive: bool = False) -> dict[str, Any]:
        store = self.state.store
        if recursive:
            entries = [self.tree_entry(repo, path, entry) for path, entry in store.walk(sha)]
        else:
            entries = [
                self.tree_entry(repo, entry.name, entry) for entry in store.tree(sha).entries
            ]
        return {
            "sha": sha,
            "url": f"{self.repo_api(repo)}/git/trees/{sha}",
            "tree": entries,
            "truncated": False,
        }

    def blob(self, repo: Repo, sha: str) -> dict[str, Any]:
        data = self.state.store.blob(sha).data
        return {
            "sha": sha,
            "node_id": node_id("Blob", sha),
            "size": len(data),
            "url": f"{self.repo_api(repo)}/git/blobs/{sha}",
            "content": wrap_base64(data),
            "encoding": "base64",
        }

    # -- contents ------------------------------------------------------------

    def content_urls(self, repo: Repo, path: str, sha: str, ref: str, kind: str) -> dict[str, Any]:
        quoted = quote(path)
        url = f"{self.repo_api(repo)}/contents/{quoted}?ref={quote(ref, safe='')}"
        git_kind = "trees" if kind == "dir" else "blobs"
        git_url = f"{self.repo_api(repo)}/git/{git_kind}/{sha}"
        html_url = f"{self.repo_html(repo)}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{quoted}"
        download = (
            None
            if kind == "dir"
            else f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{quoted}"
        )
        return {
            "url": url,
            "git_url": git_url,
            "html_url": html_url,
            "download_url": download,
            "_links": {"self": url, "git": git_url, "html": html_url},
        }

    def content_entry(self, repo: Repo, path: str, entry: TreeEntry, ref: str) -> dict[str, Any]:
        """One item of a directory listing."""
        kind = {"tree": "dir", "commit": "file"}.get(entry.type, "file")
        if entry.mode == "120000":
            kind = "symlink"
        size = len(self.state.store.blob(entry.sha).data) if entry.type == "blob" else 0
        full = {
            "type": kind,
            "size": size,
            "name": entry.name,
            "path": path,
            "sha": entry.sha,
            **self.content_urls(repo, path, entry.sha, ref, kind),
        }
        return ordered(
            _template("repos.get-content.200.response-if-content-is-a-directory")[0], full
        )

    def content_file(self, repo: Repo, path: str, entry: TreeEntry, ref: str) -> dict[str, Any]:
        data = self.state.store.blob(entry.sha).data
        large = len(data) > LARGE_FILE
        full = {
            "type": "file",
            "encoding": "none" if large else "base64",
            "size": len(data),
            "name": entry.name,
            "path": path,
            "content": "" if large else wrap_base64(data),
            "sha": entry.sha,
            **self.content_urls(repo, path, entry.sha, ref, "file"),
        }
        return ordered(_template("repos.get-content.200.response-if-content-is-a-file"), full)

    def content_special(self, repo: Repo, path: str, entry: TreeEntry, ref: str) -> dict[str, Any]:
        """A symlink whose target is not a file, or a submodule."""
        if entry.type == "commit":
            body = self.content_entry(repo, path, entry, ref)
            body.update(type="submodule", submodule_git_url="", git_url=None, html_url=None)
            body["_links"].update(git=None, html=None)
            return body
        body = self.content_entry(repo, path, entry, ref)
        body["target"] = self.state.store.blob(entry.sha).data.decode("utf-8", errors="replace")
        return body

    # -- commits and branches ------------------------------------------------

    def commit_author(self, signature: Any) -> dict[str, Any] | None:
        email = signature.email
        if email.endswith("@users.noreply.github.com"):
            login = email.split("@", 1)[0].split("+", 1)[-1]
            return self.user(login)
        user = self.state.users.get(signature.name.lower())
        return self.user(user.login) if user else None

    def commit(self, repo: Repo, sha: str, *, with_files: bool = True) -> dict[str, Any]:
        commit = self.state.store.commit(sha)
        api = f"{self.repo_api(repo)}/commits/{sha}"
        body: dict[str, Any] = {
            "sha": sha,
            "node_id": node_id("Commit", sha),
            "commit": {
                "author": self.signature(commit.author),
                "committer": self.signature(commit.committer),
                "message": commit.message,
                "tree": {
                    "sha": commit.tree,
                    "url": f"{self.repo_api(repo)}/git/trees/{commit.tree}",
                },
                "url": f"{self.repo_api(repo)}/git/commits/{sha}",
                "comment_count": 0,
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "url": api,
            "html_url": f"{self.repo_html(repo)}/commit/{sha}",
            "comments_url": f"{api}/comments",
            "author": self.commit_author(commit.author),
            "committer": self.commit_author(commit.committer),
            "parents": [
                {
                    "sha": parent,
                    "url": f"{self.repo_api(repo)}/commits/{parent}",
                    "html_url": f"{self.repo_html(repo)}/commit/{parent}",
                }
                for parent in commit.parents
            ],
        }
        if with_files:
            files = self.diff(repo, commit.parents[0] if commit.parents else None, sha)
            additions = sum(f["additions"] for f in files)
            deletions = sum(f["deletions"] for f in files)
            body["stats"] = {
                "total": additions + deletions,
                "additions": additions,
                "deletions": deletions,
            }
            body["files"] = files
        return body

    def branch(self, repo: Repo, name: str, sha: str) -> dict[str, Any]:
        body: dict[str, Any] = template("repos.get-branch.200")
        body.update(
            name=name,
            commit=self.commit(repo, sha, with_files=False),
            _links={
                "self": f"{self.repo_api(repo)}/branches/{quote(name)}",
                "html": f"{self.repo_html(repo)}/tree/{quote(name)}",
            },
            protected=name in repo.protected,
            protection_url=f"{self.repo_api(repo)}/branches/{quote(name)}/protection",
        )
        if name in repo.protected:
            checks = repo.protected[name]
            body["protection"] = {"enabled": True, "required_status_checks": {
                "enforcement_level": "non_admins", "contexts": list(checks),
                "checks": [{"context": c, "app_id": None} for c in checks]}}
        return body

    def branch_rules(self, repo: Repo, name: str) -> list[dict[str, Any]]:
        """The rules of the repository's rulesets that apply to a branch (only "required status
        checks" rules are kept here)."""
        return [{"type": "required_status_checks",
                 "ruleset_source_type": "Organization" if ruleset.get("organization") else "Repository",
                 "ruleset_source": repo.owner if ruleset.get("organization") else f"{repo.owner}/{repo.name}",
                 "ruleset_id": ruleset["id"],
                 "parameters": {"strict_required_status_checks_policy": False,
                                "required_status_checks": [{"context": c} for c in ruleset["checks"]]}}
                for ruleset in repo.rulesets if name in ruleset["branches"]]

    # -- Actions -------------------------------------------------------------

    def workflow(self, repo: Repo, workflow: Workflow) -> dict[str, Any]:
        name = self.state.workflow_name(repo, workflow)
        full = {
            "id": workflow.id,
            "node_id": node_id("Workflow", workflow.id),
            "name": name,
            "path": workflow.path,
            "state": workflow.state,
            "created_at": workflow.created_at,
            "updated_at": workflow.updated_at,
            "url": f"{self.repo_api(repo)}/actions/workflows/{workflow.id}",
            "html_url": f"{self.repo_html(repo)}/blob/{repo.default_branch}/{workflow.path}",
            "badge_url": f"{self.repo_html(repo)}/workflows/{quote(name)}/badge.svg",
        }
        return ordered(_template("actions.get-workflow.200"), full)

    def run(self, repo: Repo, run: Mapping[str, Any], attempt: int | None = None) -> dict[str, Any]:
        run_id = run["id"]
        api = f"{self.repo_api(repo)}/actions/runs/{run_id}"
        current = int(run.get("run_attempt", 1))
        shown = attempt or current
        full = dict(run)
        head_repo_name = run.get("head_repository") or repo.full_name
        head_repo = self.state.repos.get(str(head_repo_name).lower(), repo)
        full.update(
            run_attempt=shown,
            actor=self.user(run.get("actor")),
            triggering_actor=self.user(run.get("triggering_actor")),
            # GitHub lists only the open PRs: the list is empty once a PR is merged or closed (GitHub staff, con/tinuous#28)
            pull_requests=[self._run_pull(repo, item) for item in run.get("pull_requests", []) if self._open_pull(repo, item)],
            url=api,
            html_url=f"{self.repo_html(repo)}/actions/runs/{run_id}",
            jobs_url=f"{api}/jobs",
            logs_url=f"{api}/logs",
            check_suite_url=f"{self.repo_api(repo)}/check-suites/{run.get('check_suite_id')}",
            artifacts_url=f"{api}/artifacts",
            cancel_url=f"{api}/cancel",
            rerun_url=f"{api}/rerun",
            previous_attempt_url=f"{api}/attempts/{shown - 1}" if shown > 1 else None,
            workflow_url=f"{self.repo_api(repo)}/actions/workflows/{run['workflow_id']}",
            repository=self.repo_minimal(repo),
            head_repository=self.repo_like(
                head_repo, _template("actions.get-workflow-run.200", "head_repository")
            ),
        )
        return ordered(_template("actions.get-workflow-run.200"), full)

    def _open_pull(self, repo: Repo, item: Any) -> bool:
        number = item.get("number") if isinstance(item, dict) else item
        issue = repo.issues.get(number) if isinstance(number, int) else None
        return issue is None or issue.state == "open"

    def _run_pull(self, repo: Repo, item: Any) -> Any:
        if isinstance(item, int) and item in repo.pulls:
            return self.pull_minimal(repo, repo.pulls[item])
        return item

    def job(self, repo: Repo, job: Mapping[str, Any]) -> dict[str, Any]:
        api = f"{self.repo_api(repo)}/actions"
        full = dict(job)
        full.update(
            run_url=f"{api}/runs/{job['run_id']}",
            url=f"{api}/jobs/{job['id']}",
            html_url=f"{self.repo_html(repo)}/actions/runs/{job['run_id']}/job/{job['id']}",
            check_run_url=f"{self.repo_api(repo)}/check-runs/{job['id']}",
        )
        return ordered(_template("actions.get-job-for-workflow-run.200"), full)

    # -- Apps ----------------------------------------------------------------

    def installation(self, installation: Installation) -> dict[str, Any]:
        account = self.state.user(installation.account)
        settings = (
            f"{self.html}/organizations/{account.login}/settings/installations/{installation.id}"
            if account.type == "Organization"
            else f"{self.html}/settings/installations/{installation.id}"
        )
        full = {
            "id": installation.id,
            "account": self.user(account.login),
            "repository_selection": installation.repository_selection,
            "access_tokens_url": f"{self.api}/app/installations/{installation.id}/access_tokens",
            "repositories_url": f"{self.api}/installation/repositories",
            "html_url": settings,
            "app_id": self.state.app_id,
            "client_id": self.state.client_id,
            "target_id": account.id,
            "target_type": account.type,
            "permissions": dict(installation.permissions),
            "events": list(installation.events),
            "created_at": installation.created_at,
            "updated_at": installation.created_at,
            "single_file_name": None,
            "has_multiple_single_files": False,
            "single_file_paths": [],
            "app_slug": self.state.app_slug,
            "suspended_at": installation.suspended_at,
            "suspended_by": None,
        }
        return ordered(_template("apps.get-repo-installation.200"), full)

    def app(self) -> dict[str, Any]:
        permissions: dict[str, str] = {}
        for installation in self.state.installations.values():
            permissions.update(installation.permissions)
        return {
            "id": self.state.app_id,
            "client_id": self.state.client_id,
            "slug": self.state.app_slug,
            "node_id": node_id("Integration", self.state.app_id),
            "owner": self.user(self.state.app_owner),
            "name": self.state.app_name,
            "description": "",
            "external_url": f"{self.html}/apps/{self.state.app_slug}",
            "html_url": f"{self.html}/apps/{self.state.app_slug}",
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "permissions": permissions,
            "events": ["issue_comment", "pull_request", "workflow_run"],
            "installations_count": len(self.state.installations),
        }
