"""Every REST call foldbot makes on a repository, one method each. Nothing else in
foldbot builds a GitHub URL (the App's own calls, `/app` and its tokens, are in
`bot.github`). A 404 that means "there is none" is None or an empty list here; any
other failure is a `GitHubError`."""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Callable
from urllib.parse import quote

from .github import NOT_TWICE, GitHub, GitHubError

PAGE = "per_page=100"


def _q(value: str, safe: str = "") -> str:
    return quote(str(value), safe=safe)


class NotText(ValueError):
    """A file foldbot reads as text (its config, a lane workflow, an allowlist) that is not UTF-8."""

    def __init__(self, path: str, where: str) -> None:
        super().__init__(f"`{path}` is not UTF-8 text ({where}): save it as UTF-8")
        self.where = where


class RepoAPI:
    def __init__(self, gh: GitHub, repo: str) -> None:
        self.gh = gh
        self.repo = repo
        self.base = f"/repos/{repo}"

    async def _none_if_missing(self, url: str, *statuses: int) -> Any | None:
        try:
            return await self.gh.get(url)
        except GitHubError as exc:
            if exc.status in (404, *statuses):
                return None
            raise

    # -- the repository and its git data ------------------------------------------------

    async def info(self) -> dict[str, Any]:
        return await self.gh.get(self.base)  # type: ignore[no-any-return]

    async def branch_sha(self, branch: str) -> str | None:
        """The commit a branch points at; None when there is no such branch."""
        ref = await self._none_if_missing(f"{self.base}/git/ref/heads/{_q(branch, '/')}")
        return str(ref["object"]["sha"]) if ref else None

    async def branches(self, prefix: str) -> list[str]:
        """The branches whose name starts with `prefix` (`GET .../git/matching-refs/heads/<prefix>`)."""
        refs = await self.gh.get_all(f"{self.base}/git/matching-refs/heads/{_q(prefix, '/')}?{PAGE}")
        return [str(ref["ref"]).removeprefix("refs/heads/") for ref in refs]

    async def branch_head(self, branch: str) -> str:
        """The commit a branch that must exist points at (a GitHubError if it does not)."""
        ref = await self.gh.get(f"{self.base}/git/ref/heads/{_q(branch, '/')}")
        return str(ref["object"]["sha"])

    async def file(self, path: str, ref: str) -> tuple[str, str] | None:
        """A file's text and blob SHA at `ref`; None when it does not exist (or is no file)."""
        data = await self._none_if_missing(f"{self.base}/contents/{_q(path, '/')}?ref={_q(ref)}")
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        raw = base64.b64decode(data.get("content") or "")
        try:
            return raw.decode("utf-8"), str(data["sha"])
        except UnicodeDecodeError as exc:  # (NotText: the caller says which file it is to the user)
            raise NotText(path, f"byte {exc.start} is {raw[exc.start]:#04x}") from None

    async def directory(self, path: str, ref: str) -> list[dict[str, Any]]:
        """The entries of a directory at `ref`; empty when it does not exist."""
        listing = await self._none_if_missing(f"{self.base}/contents/{_q(path, '/')}?ref={_q(ref)}")
        return listing if isinstance(listing, list) else []

    async def compare(self, base: str, head: str) -> dict[str, Any]:
        """How `head` stands against `base`: the files its commits change since their merge
        base (`files`, at most 300 of them)."""
        return await self.gh.get(f"{self.base}/compare/{_q(base, '/')}...{_q(head, '/')}")  # type: ignore[no-any-return]

    async def required_check_sources(self, branch: str) -> tuple[Any, Any]:
        """GitHub's answers to what `branch` requires, read together: the branch (Contents read;
        its `protection` shows the required checks) and the rules that apply to it (Metadata
        read; the active rulesets'). A read that failed is its `GitHubError`
        (`bot.approve.read_required` reads both)."""
        where = _q(branch, "/")
        found = await asyncio.gather(self.gh.get(f"{self.base}/branches/{where}"),
                                     self.gh.get_all(f"{self.base}/rules/branches/{where}?{PAGE}"),
                                     return_exceptions=True)
        for answer in found:
            if isinstance(answer, BaseException) and not isinstance(answer, GitHubError):
                raise answer
        return found[0], found[1]

    async def commit(self, sha: str) -> dict[str, Any]:
        return await self.gh.get(f"{self.base}/git/commits/{_q(sha)}")  # type: ignore[no-any-return]

    async def create_blob(self, text: str) -> str:
        return str((await self.gh.post(f"{self.base}/git/blobs", {"content": text, "encoding": "utf-8"}))["sha"])

    async def create_tree(self, base_tree: str, entries: list[dict[str, Any]]) -> str:
        return str((await self.gh.post(f"{self.base}/git/trees", {"base_tree": base_tree, "tree": entries}))["sha"])

    async def create_commit(self, message: str, tree: str, parents: list[str]) -> str:
        data = {"message": message, "tree": tree, "parents": parents}
        return str((await self.gh.post(f"{self.base}/git/commits", data))["sha"])

    async def create_branch(self, branch: str, sha: str) -> None:
        await self.gh.post(f"{self.base}/git/refs", {"ref": f"refs/heads/{branch}", "sha": sha})

    # -- Actions ----------------------------------------------------------------------

    async def run(self, run_id: int) -> dict[str, Any]:
        return await self.gh.get(f"{self.base}/actions/runs/{int(run_id)}")  # type: ignore[no-any-return]

    async def jobs(self, run_id: int, attempt: int | None = None) -> list[dict[str, Any]]:
        """The jobs of a run's latest attempt (or of `attempt`), every page."""
        path = f"attempts/{int(attempt)}/jobs?{PAGE}" if attempt else f"jobs?filter=latest&{PAGE}"
        return await self.gh.get_all(f"{self.base}/actions/runs/{int(run_id)}/{path}", iterable_key="jobs")

    async def runs(self, workflow: int | str, *, status: str | None = None, event: str | None = None,
                   head_sha: str | None = None, count: int = 100) -> list[dict[str, Any]]:
        """The newest `count` runs of a workflow (its id or file name): one page for up to 100, else
        as many pages as it takes (or as there are)."""
        query = "".join(f"&{key}={_q(value)}" for key, value in
                        (("status", status), ("event", event), ("head_sha", head_sha)) if value)
        per_page = min(max(count, 1), 100)
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            listing = await self.gh.get(f"{self.base}/actions/workflows/{_q(str(workflow))}/runs"
                                        f"?per_page={per_page}{'' if page == 1 else f'&page={page}'}{query}")
            batch = list(listing.get("workflow_runs", []))
            out += batch
            if len(out) >= count or len(batch) < per_page:
                return out[:max(count, 1)]
            page += 1

    async def dispatch(self, workflow_file: str, ref: str, inputs: dict[str, str]) -> Any:
        """`workflow_dispatch`; GitHub answers the new run's id when it can (`return_run_details`).
        Sent once: a 5xx or a lost answer is a GitHubError (status 0 or 5xx), not retried (see
        NOT_TWICE): the caller finds out whether a run started. A server that does not take
        `return_run_details` (a GitHub Enterprise Server before 2026-02: 422, "not a permitted key",
        which starts nothing) is asked again without it, and from then on without it."""
        url = f"{self.base}/actions/workflows/{_q(workflow_file)}/dispatches"
        pool = self.gh.pool
        once = NOT_TWICE.set(True)
        try:
            if pool.run_details is not False:
                try:
                    answer = await self.gh.post(url, {"ref": ref, "inputs": inputs, "return_run_details": True})
                except GitHubError as exc:
                    if exc.status != 422 or "return_run_details" not in exc.message:
                        raise
                    pool.run_details = False
                else:
                    pool.run_details = True
                    return answer
            return await self.gh.post(url, {"ref": ref, "inputs": inputs})
        finally:
            NOT_TWICE.reset(once)

    async def job_log(self, job_id: int, max_bytes: int) -> bytes:
        """A job's log as it came (UTF-8, as a runner printed it; `bot.github.JobLogError` says why not)."""
        return await self.gh.download(f"{self.base}/actions/jobs/{int(job_id)}/logs", max_bytes)

    # -- pull requests ------------------------------------------------------------------

    async def pull(self, number: int) -> dict[str, Any]:
        return await self.gh.get(f"{self.base}/pulls/{int(number)}")  # type: ignore[no-any-return]

    async def pulls_from(self, owner: str, branch: str, *, state: str = "open") -> list[dict[str, Any]]:
        """The PRs whose head is `owner:branch`."""
        return await self.gh.get_all(f"{self.base}/pulls?state={state}&head={_q(f'{owner}:{branch}', ':/')}&{PAGE}")

    async def pull_files(self, number: int) -> list[tuple[str, ...]]:
        """The files a PR changes, as GitHub lists them (at most 3,000): each file's path, and a renamed
        file's old path after it (a lane file renamed away is a CI change)."""
        files = await self.gh.get_all(f"{self.base}/pulls/{int(number)}/files?{PAGE}")
        return [tuple(str(path) for path in (f["filename"], f.get("previous_filename")) if path) for f in files]

    async def pulls_of_commit(self, sha: str) -> list[dict[str, Any]]:
        """The PRs GitHub associates with a commit (never a fork PR's head); none for an unknown commit."""
        try:
            return await self.gh.get_all(f"{self.base}/commits/{_q(sha)}/pulls?{PAGE}")
        except GitHubError as exc:
            if exc.status in (404, 422):
                return []
            raise

    async def find_open_pull(self, match: Callable[[dict[str, Any]], bool], *, limit: int) -> dict[str, Any] | None:
        """The first open PR `match` accepts, most recently updated first, among `limit`."""
        return await self.gh.find(f"{self.base}/pulls?state=open&sort=updated&direction=desc&{PAGE}",
                                  match, limit=limit)

    async def open_pull(self, title: str, head: str, base: str, body: str) -> dict[str, Any]:
        data = {"title": title, "head": head, "base": base, "body": body}
        return await self.gh.post(f"{self.base}/pulls", data)  # type: ignore[no-any-return]

    # -- issues, comments and reactions -------------------------------------------------

    async def comments(self, number: int) -> list[dict[str, Any]]:
        """Every comment of an issue or PR, oldest first."""
        return await self.gh.get_all(f"{self.base}/issues/{int(number)}/comments?{PAGE}")

    async def create_comment(self, number: int, body: str) -> dict[str, Any]:
        return await self.gh.post(f"{self.base}/issues/{int(number)}/comments", {"body": body})  # type: ignore[no-any-return]

    async def update_comment(self, comment_id: int, body: str) -> None:
        await self.gh.patch(f"{self.base}/issues/comments/{int(comment_id)}", {"body": body})

    async def delete_comment(self, comment_id: int) -> bool:
        """Delete a comment; False when it is gone already (another process removed it)."""
        try:
            await self.gh.delete(f"{self.base}/issues/comments/{int(comment_id)}")
        except GitHubError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    async def react(self, comment_id: int, content: str) -> None:
        await self.gh.post(f"{self.base}/issues/comments/{int(comment_id)}/reactions", {"content": content})

    async def issues(self, *, label: str | None, creator: str, state: str = "open") -> list[dict[str, Any]]:
        """Issues (and PRs: GitHub lists both) by `creator`, with `label` when one is given."""
        labelled = f"&labels={_q(label)}" if label is not None else ""
        return await self.gh.get_all(f"{self.base}/issues?state={state}{labelled}&creator={_q(creator)}&{PAGE}")

    async def add_labels(self, number: int, labels: list[str]) -> None:
        await self.gh.post(f"{self.base}/issues/{int(number)}/labels", {"labels": labels})

    async def create_issue(self, title: str, body: str, labels: list[str]) -> dict[str, Any]:
        data = {"title": title, "body": body, "labels": labels}
        return await self.gh.post(f"{self.base}/issues", data)  # type: ignore[no-any-return]

    async def update_issue(self, number: int, **fields: Any) -> None:
        await self.gh.patch(f"{self.base}/issues/{int(number)}", fields)

    # -- people -------------------------------------------------------------------------

    async def permission(self, login: str) -> dict[str, Any] | None:
        """A user's collaborator permission; None for a user GitHub does not know."""
        return await self._none_if_missing(f"{self.base}/collaborators/{_q(login)}/permission")  # type: ignore[no-any-return]
