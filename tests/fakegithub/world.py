"""The fake's whole state and the helpers tests use to set it up."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .auth import default_key, new_installation_token, public_key_from_private
from .gitstore import GitStore
from .state import (
    DEFAULT_INSTALLATION_PERMISSIONS,
    JOB_URL_KEYS,
    ROLE_TO_PERMISSION,
    RUN_URL_KEYS,
    Clock,
    Comment,
    Dispatch,
    Ids,
    Installation,
    Issue,
    IssuedToken,
    Label,
    PersonalToken,
    Pull,
    Repo,
    User,
    Workflow,
    node_id,
    normalize_login,
    pseudo_sha,
    strip_keys,
)
from .workflow_yaml import DispatchRejected, load_workflow, workflow_name

RepoRef = Repo | str
DispatchHook = Callable[[Dispatch, dict[str, Any]], None]


class GitHubState:
    """Users, repositories, installations and tokens, with setup helpers."""

    def __init__(
        self,
        *,
        app_id: int = 4242,
        app_slug: str = "foldbot",
        app_name: str = "foldbot",
        private_key_pem: str | None = None,
        token_lifetime: float = 3600.0,
        html_url: str = "https://github.com",
    ) -> None:
        self.store = GitStore()
        self.clock = Clock()
        self.ids = Ids()
        self.app_id = app_id
        self.app_slug = app_slug
        self.app_name = app_name
        self.client_id = f"Iv1.{pseudo_sha('client', app_id)[:16]}"
        self.private_key_pem = private_key_pem or default_key().private_pem
        self.public_key_pem = public_key_from_private(self.private_key_pem)
        self.token_lifetime = token_lifetime
        self.html_url = html_url.rstrip("/")
        self.base_url = ""
        self.users: dict[str, User] = {}
        self.repos: dict[str, Repo] = {}
        self.installations: dict[int, Installation] = {}
        self.tokens: dict[str, IssuedToken] = {}
        self.personal_tokens: dict[str, PersonalToken] = {}
        self.dispatches: list[Dispatch] = []
        self.job_logs: dict[int, bytes] = {}  # job id -> its log, served by `actions/jobs/{id}/logs`
        self.log_links: dict[str, tuple[int, float]] = {}  # signature -> (job id, expires at, epoch s)
        self.log_link_lifetime = 60.0  # GitHub: "This link expires after 1 minute."
        self.on_dispatch: DispatchHook | None = None
        self.app_owner = "octo-org"
        self.user(self.app_owner, "Organization")
        self.bot = self.user(f"{app_slug}[bot]", "Bot")
        self._run_repo: dict[int, Repo] = {}

    # -- users ---------------------------------------------------------------

    def user(self, login: str, type: str | None = None) -> User:
        """Get or create a user (``type`` is ``User``, ``Organization`` or ``Bot``)."""
        existing = self.users.get(login.lower())
        if existing is not None:
            if type is not None:
                existing.type = type
            return existing
        kind = type or ("Bot" if login.endswith("[bot]") else "User")
        created = User(login, self.ids.next("user"), kind)
        self.users[login.lower()] = created
        return created

    # -- repositories --------------------------------------------------------

    def add_repo(
        self,
        owner: str,
        name: str,
        default_branch: str = "main",
        private: bool = False,
        *,
        owner_type: str | None = None,
        description: str | None = None,
        fork_of: RepoRef | None = None,
    ) -> Repo:
        """Create an empty repository; add content with :meth:`Repo.put_files`.

        A new owner is an ``Organization`` unless ``owner_type`` says otherwise.
        """
        if f"{owner}/{name}".lower() in self.repos:
            raise ValueError(f"repository {owner}/{name} already exists")
        known = owner.lower() in self.users
        self.user(owner, owner_type or (None if known else "Organization"))
        parent = self.repo(fork_of) if fork_of is not None else None
        repo = Repo(
            owner=owner,
            name=name,
            repo_id=self.ids.next("repo"),
            default_branch=default_branch,
            private=private,
            store=self.store,
            clock=self.clock,
            on_ref_change=self._on_ref_change,
            fork_of=parent,
            description=description,
        )
        if parent is not None:
            repo.refs.update(
                {ref: sha for ref, sha in parent.refs.items() if ref.startswith("refs/heads/")}
            )
        self.repos[repo.full_name.lower()] = repo
        return repo

    def repo(self, repo: RepoRef) -> Repo:
        if isinstance(repo, Repo):
            return repo
        found = self.repos.get(repo.lower())
        if found is None:
            raise KeyError(f"no repository {repo!r}; add it with add_repo()")
        return found

    def find_repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def repo_by_id(self, repo_id: int) -> Repo | None:
        return next((repo for repo in self.repos.values() if repo.id == repo_id), None)

    def set_permission(self, repo: RepoRef, user: str, role_name: str) -> None:
        """Give ``user`` a repository role: read, triage, write, maintain or admin."""
        if role_name not in ROLE_TO_PERMISSION:
            raise ValueError(f"unknown role {role_name!r}; use one of {sorted(ROLE_TO_PERMISSION)}")
        self.user(user)
        self.repo(repo).roles[user] = role_name

    def add_label(
        self, repo: RepoRef, name: str, color: str = "ededed", description: str | None = None
    ) -> Label:
        target = self.repo(repo)
        existing = self.label(target, name)
        if existing is not None:
            return existing
        label = Label(self.ids.next("label"), name, color, description)
        target.labels[name] = label
        return label

    @staticmethod
    def label(repo: Repo, name: str) -> Label | None:
        return next(
            (label for key, label in repo.labels.items() if key.lower() == name.lower()), None
        )

    # -- installations and tokens ---------------------------------------------

    def add_installation(
        self,
        installation_id: int,
        repos: Iterable[RepoRef] = (),
        *,
        permissions: Mapping[str, str] | None = None,
        account: str | None = None,
        repository_selection: str = "selected",
    ) -> Installation:
        """Install the App on ``repos``; ``permissions`` defaults to what foldbot needs."""
        targets = [self.repo(repo) for repo in repos]
        owner = account or (targets[0].owner if targets else self.app_owner)
        installation = Installation(
            id=installation_id,
            account=owner,
            repo_ids={repo.id for repo in targets},
            permissions=dict(
                permissions if permissions is not None else DEFAULT_INSTALLATION_PERMISSIONS
            ),
            repository_selection=repository_selection,
            created_at=self.clock.stamp(),
        )
        installation.permissions.setdefault("metadata", "read")
        self.installations[installation_id] = installation
        return installation

    def installation_for(self, repo: RepoRef) -> Installation | None:
        target = self.repo(repo)
        return next(
            (inst for inst in self.installations.values() if target.id in inst.repo_ids), None
        )

    def mint_token(
        self,
        installation_id: int,
        *,
        permissions: Mapping[str, str] | None = None,
        repo_ids: Iterable[int] | None = None,
    ) -> IssuedToken:
        installation = self.installations[installation_id]
        token = IssuedToken(
            token=new_installation_token(),
            installation_id=installation_id,
            expires_at=time.time() + self.token_lifetime,
            permissions=dict(permissions if permissions is not None else installation.permissions),
            repo_ids=frozenset(repo_ids) if repo_ids is not None else None,
        )
        self.tokens[token.token] = token
        return token

    def installation_token(self, installation_id: int) -> str:
        """Issue an installation token directly (tests that don't exercise the JWT flow)."""
        return self.mint_token(installation_id).token

    def uninstall(self, installation_id: int) -> None:
        """The owner uninstalls the App: the installation is gone (its access token requests
        answer 404) and its tokens are revoked (401 Bad credentials)."""
        del self.installations[installation_id]
        self.tokens = {key: t for key, t in self.tokens.items() if t.installation_id != installation_id}

    def suspend(self, installation_id: int) -> None:
        """The owner suspends the installation: its token requests and its tokens are answered
        403 "This installation has been suspended"."""
        self.installations[installation_id].suspended_at = self.clock.stamp()

    def remove_from_installation(self, installation_id: int, repo: RepoRef) -> None:
        """The owner takes a repository out of the installation: a private one answers its
        tokens 404, as if it did not exist (a public one is read as anyone reads it)."""
        self.installations[installation_id].repo_ids.discard(self.repo(repo).id)

    def lock(self, repo: RepoRef, number: int, reason: str | None = "resolved") -> None:
        """Lock an issue's or pull request's conversation (`PUT .../issues/{n}/lock`)."""
        issue = self.repo(repo).issues[number]
        issue.locked, issue.active_lock_reason = True, reason

    def archive(self, repo: RepoRef) -> None:
        """Archive a repository: read-only from then on."""
        self.repo(repo).archived = True

    def expire_tokens(self) -> None:
        """Make every installation token issued so far expired."""
        past = time.time() - 1
        self.tokens = {
            key: IssuedToken(t.token, t.installation_id, past, t.permissions, t.repo_ids)
            for key, t in self.tokens.items()
        }

    def add_personal_token(
        self, token: str, login: str, repos: Iterable[RepoRef] | None = None
    ) -> PersonalToken:
        """Accept ``token`` as ``login``'s personal access token (all permissions)."""
        user = self.user(login)
        repo_ids = frozenset(self.repo(repo).id for repo in repos) if repos is not None else None
        personal = PersonalToken(token, user.login, repo_ids)
        self.personal_tokens[token] = personal
        return personal

    # -- issues, pulls, comments ---------------------------------------------

    def add_issue(
        self,
        repo: RepoRef,
        title: str,
        body: str | None = None,
        *,
        user_login: str = "octocat",
        labels: Sequence[str] = (),
        state: str = "open",
        number: int | None = None,
    ) -> Issue:
        target = self.repo(repo)
        number = number or target.next_number()
        if number in target.issues:
            raise ValueError(f"{target.full_name}#{number} already exists")
        for name in labels:
            self.add_label(target, name)
        stamp = self.clock.stamp()
        issue = Issue(
            number=number,
            id=self.ids.next("issue"),
            title=title,
            body=body,
            user=self.user(user_login).login,
            created_at=stamp,
            updated_at=stamp,
            state=state,
            closed_at=stamp if state == "closed" else None,
            labels=[self.label(target, name).name for name in labels],  # type: ignore[union-attr]
        )
        target.issues[number] = issue
        return issue

    def add_pull(
        self,
        repo: RepoRef,
        number: int | None = None,
        head_ref: str = "feature",
        head_sha: str | None = None,
        base_ref: str | None = None,
        head_repo_full_name: str | None = None,
        files: Sequence[str | Mapping[str, Any]] | None = None,
        user_login: str = "octocat",
        *,
        title: str | None = None,
        body: str | None = "",
        state: str = "open",
        draft: bool = False,
        labels: Sequence[str] = (),
    ) -> Pull:
        """Open a pull request from ``head_ref`` (of a fork when ``head_repo_full_name``
        names another repository; the fork is created if needed) into ``base_ref``.

        ``files`` lists the changed paths (or diff-entry dicts); when omitted they are
        computed from the git data of the base branch and the head commit.
        """
        target = self.repo(repo)
        head_repo = target
        if head_repo_full_name and head_repo_full_name.lower() != target.full_name.lower():
            owner, _, name = head_repo_full_name.partition("/")
            head_repo = self.find_repo(owner, name) or self.add_repo(
                owner,
                name,
                target.default_branch,
                target.private,
                owner_type="User",
                fork_of=target,
            )
        sha = head_sha or head_repo.branch_sha(head_ref)
        if sha is None:
            raise ValueError(
                f"{head_repo.full_name} has no branch {head_ref!r}: "
                "pass head_sha or put_files first"
            )
        if head_repo.branch_sha(head_ref) is None and self.store.kind(sha) == "commit":
            head_repo.refs[f"refs/heads/{head_ref}"] = sha
        issue = self.add_issue(
            target,
            title or f"Changes from {head_ref}",
            body,
            user_login=user_login,
            labels=labels,
            state=state,
            number=number,
        )
        issue.is_pull = True
        pull = Pull(
            number=issue.number,
            id=self.ids.next("pull"),
            head_ref=head_ref,
            head_sha=sha,
            head_repo=head_repo,
            base_ref=base_ref or target.default_branch,
            files=None if files is None else [_diff_entry(item) for item in files],
            draft=draft,
            maintainer_can_modify=head_repo is not target,
        )
        target.pulls[pull.number] = pull
        if self.store.kind(sha) == "commit":
            target.refs[f"refs/pull/{pull.number}/head"] = sha
        return pull

    def add_comment(
        self, repo: RepoRef, number: int, body: str, *, user_login: str = "octocat"
    ) -> Comment:
        target = self.repo(repo)
        issue = target.issues[number]
        stamp = self.clock.stamp()
        comment = Comment(
            id=self.ids.next("comment"),
            issue_number=number,
            body=body,
            user=self.user(user_login).login,
            created_at=stamp,
            updated_at=stamp,
        )
        target.comments[comment.id] = comment
        issue.comment_ids.append(comment.id)
        return comment

    def comments_on(self, repo: RepoRef, number: int) -> list[Comment]:
        """The comments of an issue or pull request, oldest first."""
        target = self.repo(repo)
        return [target.comments[cid] for cid in target.issues[number].comment_ids]

    def _on_ref_change(self, repo: Repo, ref: str, sha: str | None) -> None:
        """A push to a pull request's head branch moves the pull request's head."""
        if sha is None or not ref.startswith("refs/heads/"):
            return
        branch = ref.removeprefix("refs/heads/")
        for base in self.repos.values():
            for pull in base.pulls.values():
                if pull.head_repo is repo and pull.head_ref == branch:
                    pull.head_sha = sha
                    base.refs[f"refs/pull/{pull.number}/head"] = sha

    # -- Actions ---------------------------------------------------------------

    def add_workflow(
        self,
        repo: RepoRef,
        id: int,
        path: str,
        name: str | None = None,
        *,
        state: str = "active",
    ) -> Workflow:
        """Register a workflow; without ``name`` it comes from the YAML, else the path."""
        target = self.repo(repo)
        stamp = self.clock.stamp()
        workflow = Workflow(id, path, name, state, stamp, stamp)
        target.workflows[id] = workflow
        return workflow

    def workflow_name(self, repo: Repo, workflow: Workflow, ref: str | None = None) -> str:
        if workflow.name:
            return workflow.name
        sha = repo.resolve(ref or repo.default_branch)
        entry = self.store.lookup(self.store.commit(sha).tree, workflow.path) if sha else None
        if entry is not None and entry.type == "blob":
            try:
                text = self.store.blob(entry.sha).data.decode("utf-8", "replace")
                parsed = workflow_name(load_workflow(text))
            except DispatchRejected:
                parsed = None
            if parsed:
                return parsed
        return workflow.path

    def add_run(
        self, repo: RepoRef, run: Mapping[str, Any] | None = None, **fields: Any
    ) -> dict[str, Any]:
        """Add a workflow run from a (partial) GitHub-shaped run dict.

        Missing fields are filled like GitHub would; URL fields are always derived
        from the fake's base URL when served. Returns the stored (mutable) dict.
        """
        target = self.repo(repo)
        data = strip_keys({**(run or {}), **fields}, (*RUN_URL_KEYS, "repository"))
        workflow = self._workflow_for_run(target, data)
        run_id = int(data.get("id") or self.ids.next("run"))
        head_branch = data.get("head_branch") or target.default_branch
        head_sha = data.get("head_sha") or target.resolve(head_branch) or pseudo_sha("run", run_id)
        created = data.get("created_at") or self.clock.stamp()
        status = data.get("status", "queued")
        head_commit = self._head_commit(head_sha)
        name = self.workflow_name(target, workflow, head_sha if head_commit else None)
        title = head_commit["message"].split("\n", 1)[0] if head_commit else name
        previous = [
            r["run_number"] for r in target.runs.values() if r["workflow_id"] == workflow.id
        ]
        check_suite_id = self.ids.next("check_suite")
        actor = normalize_login(data.get("actor")) or target.owner
        stored: dict[str, Any] = {
            "id": run_id,
            "name": name,
            "node_id": node_id("WorkflowRun", run_id),
            "check_suite_id": check_suite_id,
            "check_suite_node_id": node_id("CheckSuite", check_suite_id),
            "head_branch": head_branch,
            "head_sha": head_sha,
            "path": workflow.path,
            "run_number": max(previous, default=0) + 1,
            "event": "push",
            "display_title": title,
            "status": status,
            "conclusion": "success" if status == "completed" else None,
            "workflow_id": workflow.id,
            "pull_requests": [],
            "created_at": created,
            "updated_at": created,
            "actor": actor,
            "run_attempt": 1,
            "referenced_workflows": [],
            "run_started_at": created,
            "triggering_actor": actor,
            "head_commit": head_commit,
            "head_repository": target.full_name,
        }
        stored.update(data)
        stored["id"] = run_id
        stored["actor"] = actor
        stored["triggering_actor"] = normalize_login(stored.get("triggering_actor")) or actor
        head_repository = stored.get("head_repository")
        if isinstance(head_repository, Mapping):
            stored["head_repository"] = head_repository["full_name"]
        target.runs[run_id] = stored
        self._run_repo[run_id] = target
        return stored

    def _workflow_for_run(self, repo: Repo, data: Mapping[str, Any]) -> Workflow:
        if data.get("workflow_id") is not None:
            workflow = repo.workflow(data["workflow_id"])
            if workflow is None:
                raise ValueError(f"{repo.full_name}: unknown workflow_id {data['workflow_id']}")
            return workflow
        if data.get("path"):
            path = str(data["path"]).split("@", 1)[0]
            workflow = repo.workflow(path)
            if workflow is None:
                workflow = self.add_workflow(repo, max(repo.workflows, default=100000) + 1, path)
            return workflow
        if len(repo.workflows) == 1:
            return next(iter(repo.workflows.values()))
        raise ValueError(f"{repo.full_name}: pass workflow_id or path (add_workflow first)")

    def _head_commit(self, sha: str) -> dict[str, Any] | None:
        if self.store.kind(sha) != "commit":
            return None
        commit = self.store.commit(sha)
        return {
            "id": sha,
            "tree_id": commit.tree,
            "message": commit.message,
            "timestamp": commit.committer.date,
            "author": {"name": commit.author.name, "email": commit.author.email},
            "committer": {"name": commit.committer.name, "email": commit.committer.email},
        }

    def run(self, run_id: int) -> dict[str, Any]:
        return self.run_repo(run_id).runs[run_id]

    def run_repo(self, run_id: int) -> Repo:
        repo = self._run_repo.get(run_id)
        if repo is None:
            raise KeyError(f"no workflow run {run_id}; add it with add_run()")
        return repo

    def update_run(self, run_id: int, **fields: Any) -> dict[str, Any]:
        """Change a run (e.g. ``status="completed", conclusion="failure"``)."""
        run = self.run(run_id)
        run.update(strip_keys(fields, RUN_URL_KEYS))
        if "updated_at" not in fields:
            run["updated_at"] = self.clock.stamp_after(run["updated_at"])
        return run

    def add_job_log(self, job_id: int, text: str | bytes) -> None:
        """The log GitHub keeps for a job (its plain-text download)."""
        self.job_logs[int(job_id)] = text.encode() if isinstance(text, str) else bytes(text)

    def add_jobs(self, run_id: int, jobs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add jobs to a run from (partial) GitHub-shaped job dicts; returns the stored dicts."""
        repo = self.run_repo(run_id)
        run = repo.runs[run_id]
        added: list[dict[str, Any]] = []
        for index, spec in enumerate(jobs, start=1):
            data = strip_keys(spec, JOB_URL_KEYS)
            job_id = int(data.get("id") or self.ids.next("job"))
            status = data.get("status", "completed")
            created = data.get("created_at") or self.clock.stamp()
            started = status not in ("queued", "waiting", "pending", "requested")
            stored: dict[str, Any] = {
                "id": job_id,
                "run_id": run_id,
                "run_attempt": run.get("run_attempt", 1),
                "node_id": node_id("CheckRun", job_id),
                "head_sha": run["head_sha"],
                "status": status,
                "conclusion": "success" if status == "completed" else None,
                "created_at": created,
                "started_at": created,
                "completed_at": created if status == "completed" else None,
                "name": f"job {len(repo.jobs) + index}",
                "steps": [],
                "labels": ["ubuntu-latest"],
                "runner_id": job_id % 1000 if started else None,
                "runner_name": f"GitHub Actions {job_id % 1000}" if started else None,
                "runner_group_id": 0 if started else None,
                "runner_group_name": "GitHub Actions" if started else None,
                "workflow_name": run["name"],
                "head_branch": run["head_branch"],
            }
            stored.update(data)
            stored["id"] = job_id
            stored["run_id"] = run_id
            stored["steps"] = [
                _step(stored, number, step) for number, step in enumerate(stored["steps"], 1)
            ]
            repo.jobs[job_id] = stored
            added.append(stored)
        return added

    def jobs_of(self, run_id: int, attempt: int | None = None) -> list[dict[str, Any]]:
        repo = self.run_repo(run_id)
        return [
            job
            for job in repo.jobs.values()
            if job["run_id"] == run_id and (attempt is None or job.get("run_attempt", 1) == attempt)
        ]


def _step(job: Mapping[str, Any], number: int, step: Mapping[str, Any]) -> dict[str, Any]:
    filled: dict[str, Any] = {
        "name": f"Step {number}",
        "status": job["status"],
        "conclusion": job["conclusion"],
        "number": number,
        "started_at": job["started_at"],
        "completed_at": job["completed_at"],
    }
    filled.update(step)
    return filled


def _diff_entry(item: str | Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"filename": item} if isinstance(item, str) else dict(item)
    entry.setdefault("status", "modified")
    return entry
