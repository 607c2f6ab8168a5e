"""`/fold approve [<patch-id>]`: commit exactly the patch a maintainer saw, on a branch,
and open a pull request. If the lane files moved since, the plan is recomputed, and
a different result is shown for a new approval instead of being committed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .api import RepoAPI
from .github import GitHubError

BRANCH_PREFIX = "foldbot/fold-"


class ApproveRefusal(Exception):
    """The approval is not carried out; the message is the reply."""


def patch_text(report_body: str) -> str | None:
    """The patch in a report body (foldbot's own comment): the ```diff block."""
    match = re.search(r"```diff\n(.*?)\n```", report_body, re.S)
    return match.group(1).replace("`\u200b``", "```") + "\n" if match else None


@dataclass(frozen=True)
class Committed:
    branch: str
    commit_sha: str
    pull: dict[str, Any]
    created: bool  # False: the branch and PR existed already with this content


def workflow_permission_refusal(error: GitHubError) -> ApproveRefusal | None:
    """GitHub refuses changes to `.github/workflows/` from an App without `workflows`."""
    if error.status in (403, 422) and "workflow" in error.message.lower():
        return ApproveRefusal(
            "GitHub refused to change `.github/workflows/`: the App lacks the **Workflows: write** permission. "
            "An organisation owner can grant it under Settings → GitHub Apps → foldbot → Permissions "
            "(Repository permissions → Workflows: Read and write), then accept the new permission; "
            f"approve again afterwards. (GitHub said: {error.message[:200]})")
    return None


async def commit_files(api: RepoAPI, base_sha: str, files: dict[str, str], message: str) -> tuple[str, str]:
    """Blobs → a tree on the base commit's tree → a commit; returns (commit sha, tree sha)."""
    base = await api.commit(base_sha)
    entries = []
    for path, text in sorted(files.items()):
        entries.append({"path": path, "mode": "100644", "type": "blob", "sha": await api.create_blob(text)})
    tree = await api.create_tree(base["tree"]["sha"], entries)
    return await api.create_commit(message, tree, [base_sha]), tree


async def commit_and_open(api: RepoAPI, *, base_sha: str, default_branch: str, patch_id: str,
                          files: dict[str, str], title: str, body: str) -> Committed:
    """Idempotent: the same patch approved again links the existing branch and PR; a
    branch of that name with other content is never overwritten."""
    branch = f"{BRANCH_PREFIX}{patch_id}"
    message = f"{title}\n\nPatch {patch_id}, proposed by foldbot and approved on its pull request."
    try:
        commit_sha, tree_sha = await commit_files(api, base_sha, files, message)
        present = await api.branch_sha(branch)
        created = present is None
        if present is not None:
            existing = await api.commit(present)
            if existing["tree"]["sha"] != tree_sha:
                raise ApproveRefusal(f"The branch `{branch}` already exists with other content; foldbot does not "
                                     "overwrite it. Delete it, or approve after the report is refreshed.")
            commit_sha = present
        else:
            await api.create_branch(branch, commit_sha)
        pulls = await api.pulls_from(api.repo.split("/", 1)[0], branch, state="all")
        pull = pulls[0] if pulls else await api.open_pull(title, branch, default_branch, body)
        if not pulls:
            created = True
    except GitHubError as exc:
        refusal = workflow_permission_refusal(exc)
        if refusal:
            raise refusal from exc
        raise
    return Committed(branch, commit_sha, pull, created)
