"""Builders for realistic GitHub Actions "run bundles".

A run bundle is a JSON-able dict::

    {"workflow_run": <GET /repos/{o}/{r}/actions/runs/{id}>,
     "jobs": [<job objects as in GET .../actions/runs/{id}/jobs>]}

The object shapes come from GitHub's official REST examples (octokit/openapi),
read at runtime from ``<repo>/../shared/fixtures/github/rest/examples/``; every
field of those templates is filled with a value that fits the run being
described (ids, URLs under the real repository, head SHA, timestamps, runner).
Jobs also carry ``created_at`` and ``run_attempt``, which the current API
returns although the example omits them.

Typical use::

    spec = amd_job("unit (linux-mi300-1gpu-x)", labels=["linux-mi300-1gpu-x"],
                   setup_minutes=80, tests=[("Run unit tests", 4.0)])
    b = bundle(run_id=1, repo="o/r", workflow_path=".github/workflows/ci.yml",
               workflow_name="CI", head_sha="ab" * 20, jobs=[spec],
               start=datetime(2026, 8, 10, 8, tzinfo=timezone.utc))

Conventions:

* Timestamps are ``YYYY-MM-DDTHH:MM:SSZ`` (UTC, whole seconds) for runs, jobs
  and steps.  Step durations are rounded to whole seconds.
* A step with conclusion ``"skipped"`` has ``started_at``/``completed_at`` null
  and takes no time.
* Jobs are laid out independently: a job is created ``after_minutes`` after the
  run start and starts ``queue_minutes`` later; its steps then run back to back.
  Nothing enforces ``needs:`` ordering or ``max-parallel``; callers that want it
  pass ``after_minutes`` (see ``JobSpec.end_minutes``).
* Job ids are ``run_id * 1000 + i`` with ``i`` the 1-based position in ``jobs``.
* Step numbers follow what GitHub returns: main steps are numbered 1..m, and the
  post-job steps (``Post ...`` and ``Complete job``) continue at 2*m.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "Step",
    "JobSpec",
    "amd_job",
    "job",
    "skipped_job",
    "pull_request_minimal",
    "bundle",
    "write_bundles",
    "isoformat",
    "TEMPLATE_DIR",
]

#: Where GitHub's example responses live (outside the repo, not copied into it).
TEMPLATE_DIR = (
    Path(__file__).resolve().parent.parent.parent
    / "shared" / "fixtures" / "github" / "rest" / "examples"
)
_RUN_TEMPLATE = "actions.get-workflow-run.200.json"
_JOBS_TEMPLATE = "actions.list-jobs-for-workflow-run.200.json"

#: Seconds of the fixed "Set up job" step of every job built by ``amd_job``.
SET_UP_JOB_SECONDS = 6

# Share of setup_minutes for the two big setup steps of an AMD job.
CONTAINER_SHARE = 0.55
INSTALL_SHARE = 0.40
# Relative weights of the small setup steps that share the remaining ~5 %.
_SMALL_WEIGHTS = {"Checkout code": 3, "Ensure VRAM is clear": 2}
_SMALL_DEFAULT_WEIGHT = 2
_TEARDOWN_SECONDS = 4
_POST_CHECKOUT_SECONDS = 1
_COMPLETE_JOB_SECONDS = 1

_GITHUB_HOSTED = {"ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04", "windows-latest", "macos-latest"}


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class Step:
    """One step of a job: its display name, duration and conclusion.

    ``minutes`` is rounded to whole seconds when laid out.  A ``"skipped"``
    step gets null timestamps and takes no time whatever ``minutes`` says.
    """

    name: str
    minutes: float
    conclusion: str = "success"

    @property
    def seconds(self) -> int:
        """Duration in whole seconds (0 for a skipped step)."""
        if self.conclusion == "skipped":
            return 0
        return max(0, round(self.minutes * 60))


@dataclass(frozen=True)
class JobSpec:
    """Everything ``bundle`` needs to emit one job object.

    ``after_minutes`` is when the job is created, relative to the run start;
    it starts ``queue_minutes`` later.  A skipped job (conclusion ``"skipped"``)
    has no steps, no labels and ``started_at == completed_at``.
    """

    name: str
    steps: tuple[Step, ...] = ()
    labels: tuple[str, ...] = ()
    conclusion: str = "success"
    queue_minutes: float = 2.0
    after_minutes: float = 0.0
    runner_name: str | None = None

    @property
    def skipped(self) -> bool:
        return self.conclusion == "skipped"

    @property
    def duration_seconds(self) -> int:
        """Wall time from the first step's start to the last step's end."""
        return sum(s.seconds for s in self.steps)

    @property
    def end_minutes(self) -> float:
        """Minutes from the run start to this job's completion (for laying out
        dependent jobs with ``after_minutes``)."""
        if self.skipped:
            return self.after_minutes
        return self.after_minutes + self.queue_minutes + self.duration_seconds / 60

    def step(self, name: str) -> Step:
        """The first step called ``name`` (KeyError if none)."""
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)


def job(
    name: str,
    steps: Sequence[Step],
    labels: Sequence[str],
    conclusion: str = "success",
    queue_minutes: float = 2.0,
    *,
    after_minutes: float = 0.0,
    runner_name: str | None = None,
) -> JobSpec:
    """A job with exactly ``steps`` (include ``Set up job``/``Complete job``
    yourself; ``amd_job`` does it for AMD GPU jobs)."""
    return JobSpec(
        name=name,
        steps=tuple(steps),
        labels=tuple(labels),
        conclusion=conclusion,
        queue_minutes=queue_minutes,
        after_minutes=after_minutes,
        runner_name=runner_name,
    )


def skipped_job(name: str, *, after_minutes: float = 0.0) -> JobSpec:
    """A job GitHub skipped because of its ``if:``: status completed,
    conclusion skipped, no steps, no labels, no runner, zero duration."""
    return JobSpec(name=name, conclusion="skipped", queue_minutes=0.0, after_minutes=after_minutes)


def _split_setup(total_s: int, small_names: Sequence[str]) -> dict[str, int]:
    """Whole-second durations of the setup steps that sum to ``total_s``."""
    head = min(SET_UP_JOB_SECONDS, total_s)
    container = round(CONTAINER_SHARE * total_s)
    install = round(INSTALL_SHARE * total_s)
    small = total_s - head - container - install
    if small < 0:  # very short setups: shrink the big steps, never go negative
        install += small
        small = 0
        if install < 0:
            container += install
            install = 0
    weights = [_SMALL_WEIGHTS.get(n, _SMALL_DEFAULT_WEIGHT) for n in small_names]
    wsum = sum(weights) or 1
    parts = [small * w // wsum for w in weights]
    if parts:
        parts[0] += small - sum(parts)
    else:
        install += small
    out = {"Set up job": head, "Start CI container": container, "Install dependencies": install}
    out.update(zip(small_names, parts))
    assert sum(out.values()) == total_s
    return out


def amd_job(
    name: str,
    *,
    labels: Sequence[str],
    setup_minutes: float,
    tests: Sequence[tuple[str, float]],
    extra_setup: Sequence[str] = (),
    teardown: Sequence[str] = ("Upload diffusion failure artifacts",),
    download_artifacts: str | None = "skipped",
    conclusion: str = "success",
    queue_minutes: float = 2.0,
    after_minutes: float = 0.0,
    runner_name: str | None = None,
) -> JobSpec:
    """An AMD GPU job with SGLang's step sequence.

    Steps: ``Set up job`` (0.1 min), ``Checkout code``, ``Ensure VRAM is clear``,
    ``Download artifacts`` (conclusion ``download_artifacts``; ``"skipped"`` by
    default, ``None`` leaves the step out), ``Start CI container`` (~55 % of
    ``setup_minutes``, the image pull), ``Install dependencies`` (~40 %), each
    of ``extra_setup`` (small), then the ``tests`` steps ``(name, minutes)``,
    the ``teardown`` steps (a few seconds each), ``Post Checkout code`` and
    ``Complete job``.  All steps before the first test step sum to
    ``setup_minutes`` rounded to whole seconds.

    ``conclusion="failure"`` makes the last test step fail (teardown steps are
    ``if: always()`` and still run).
    """
    if not tests:
        raise ValueError("an AMD job needs at least one test step")
    if setup_minutes < 0:
        raise ValueError("setup_minutes must be >= 0")
    small_names = ["Checkout code", "Ensure VRAM is clear"]
    if download_artifacts not in (None, "skipped"):
        small_names.append("Download artifacts")
    small_names.extend(extra_setup)
    secs = _split_setup(round(setup_minutes * 60), small_names)

    def s(n: str, conclusion: str = "success") -> Step:
        return Step(n, secs[n] / 60, conclusion)

    steps = [s("Set up job"), s("Checkout code"), s("Ensure VRAM is clear")]
    if download_artifacts == "skipped":
        steps.append(Step("Download artifacts", 0.0, "skipped"))
    elif download_artifacts is not None:
        steps.append(s("Download artifacts", download_artifacts))
    steps += [s("Start CI container"), s("Install dependencies")]
    steps += [s(n) for n in extra_setup]
    for i, (tname, minutes) in enumerate(tests):
        failed = conclusion == "failure" and i == len(tests) - 1
        steps.append(Step(tname, minutes, "failure" if failed else "success"))
    steps += [Step(n, _TEARDOWN_SECONDS / 60) for n in teardown]
    steps += [Step("Post Checkout code", _POST_CHECKOUT_SECONDS / 60),
              Step("Complete job", _COMPLETE_JOB_SECONDS / 60)]
    return JobSpec(
        name=name,
        steps=tuple(steps),
        labels=tuple(labels),
        conclusion=conclusion,
        queue_minutes=queue_minutes,
        after_minutes=after_minutes,
        runner_name=runner_name,
    )


# --------------------------------------------------------------------------- helpers


def isoformat(t: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC (naive datetimes are taken as UTC)."""
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return t.replace(microsecond=0).isoformat() + "Z"


def _minutes(t: datetime, minutes: float) -> datetime:
    return t + timedelta(seconds=round(minutes * 60))


def _num(*parts: object, digits: int = 9) -> int:
    """A stable pseudo-random positive integer derived from ``parts``."""
    h = hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()
    return int(h, 16) % (9 * 10 ** (digits - 1)) + 10 ** (digits - 1)


def _sha(*parts: object) -> str:
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()


def _node_id(type_name: str, ident: int) -> str:
    """Legacy global node id, e.g. ``MDQ6VXNlcjE=`` == b64("04:User1")."""
    raw = f"0{len(type_name)}:{type_name}{ident}"
    return base64.b64encode(raw.encode()).decode()


@lru_cache(maxsize=None)
def _template(name: str) -> dict[str, Any]:
    path = TEMPLATE_DIR / name
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"GitHub example response {path} not found; tests/builders.py reads its "
            "shape templates from <repo>/../shared/fixtures/github/rest/examples/"
        ) from None


def _run_template() -> dict[str, Any]:
    return copy.deepcopy(_template(_RUN_TEMPLATE))


def _job_template() -> dict[str, Any]:
    return copy.deepcopy(_template(_JOBS_TEMPLATE)["jobs"][0])


def _user(login: str, *, org: bool = False) -> dict[str, Any]:
    """A simple-user object for ``login`` shaped like the template's actor."""
    tpl = _run_template()["actor"]
    uid = _num("user", login, digits=8)
    out: dict[str, Any] = {}
    for k, v in tpl.items():
        out[k] = v.replace("octocat", login) if isinstance(v, str) else v
    out.update(
        login=login,
        id=uid,
        node_id=_node_id("Organization" if org else "User", uid),
        avatar_url=f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        gravatar_id="",
        type="Organization" if org else "User",
        site_admin=False,
    )
    return out


def _repository(repo: str, *, with_hooks: bool = True) -> dict[str, Any]:
    """A minimal-repository object for ``owner/name`` shaped like the template."""
    owner, name = repo.split("/", 1)
    tpl = _run_template()["repository"]
    rid = _num("repo", repo)
    out: dict[str, Any] = {}
    for k, v in tpl.items():
        if isinstance(v, str):
            v = v.replace("octocat/Hello-World", repo).replace("octo-org/octo-repo", repo)
        out[k] = v
    out.update(
        id=rid,
        node_id=_node_id("Repository", rid),
        name=name,
        full_name=repo,
        owner=_user(owner, org=True),
        private=False,
        html_url=f"https://github.com/{repo}",
        description=f"{name}: CI under test",
        fork=False,
        url=f"https://api.github.com/repos/{repo}",
        git_url=f"git://github.com/{repo}.git",
        ssh_url=f"git@github.com:{repo}.git",
        hooks_url=f"https://api.github.com/repos/{repo}/hooks",
    )
    return out


def pull_request_minimal(
    repo: str, number: int, *, head_ref: str, head_sha: str, base_sha: str, base_ref: str = "main"
) -> dict[str, Any]:
    """A pull-request-minimal object, as GitHub puts in ``workflow_run.pull_requests``."""
    repo_ref = {"id": _num("repo", repo), "url": f"https://api.github.com/repos/{repo}",
                "name": repo.split("/", 1)[1]}
    return {
        "url": f"https://api.github.com/repos/{repo}/pulls/{number}",
        "id": _num("pr", repo, number, digits=10),
        "number": number,
        "head": {"ref": head_ref, "sha": head_sha, "repo": dict(repo_ref)},
        "base": {"ref": base_ref, "sha": base_sha, "repo": dict(repo_ref)},
    }


def _step_numbers(steps: Sequence[Step]) -> list[int]:
    """GitHub numbers main steps 1..m and post-job steps from 2*m on."""
    post_from = next(
        (i for i, s in enumerate(steps) if s.name.startswith("Post ") or s.name == "Complete job"),
        len(steps),
    )
    return [i + 1 if i < post_from else 2 * post_from + (i - post_from) for i in range(len(steps))]


_POOL_SIZE = 16  # self-hosted runners per label


def _runner(spec: JobSpec, job_id: int, ordinal: int) -> tuple[int | None, str | None, int | None, str | None]:
    """(runner_id, runner_name, runner_group_id, runner_group_name) for a job.

    ``ordinal`` counts earlier jobs of the run on the same label, so jobs of
    one run never share a self-hosted runner (up to ``_POOL_SIZE``)."""
    if spec.skipped:
        return None, None, None, None
    if spec.labels and spec.labels[0] in _GITHUB_HOSTED:
        rid = _num("hosted-runner", job_id, digits=10)
        return rid, spec.runner_name or f"GitHub Actions {rid}", 0, "GitHub Actions"
    label = spec.labels[0] if spec.labels else "self-hosted"
    slot = (_num("slot", job_id // 1000, label) + ordinal) % _POOL_SIZE + 1
    name = spec.runner_name or f"{label}-{slot:02d}"
    return _num("runner", name, digits=4), name, 1, "Default"


def _job_object(
    spec: JobSpec, *, job_id: int, run_id: int, repo: str, head_sha: str, head_branch: str,
    workflow_name: str, start: datetime, ordinal: int = 0,
) -> dict[str, Any]:
    out = _job_template()
    created = _minutes(start, spec.after_minutes)
    began = created if spec.skipped else _minutes(created, spec.queue_minutes)
    steps: list[dict[str, Any]] = []
    t = began
    for s, number in zip(spec.steps, _step_numbers(spec.steps)):
        if s.conclusion == "skipped":
            st = en = None
        else:
            st, t = isoformat(t), t + timedelta(seconds=s.seconds)
            en = isoformat(t)
        steps.append({"name": s.name, "status": "completed", "conclusion": s.conclusion,
                      "number": number, "started_at": st, "completed_at": en})
    runner_id, runner_name, group_id, group_name = _runner(spec, job_id, ordinal)
    out.update(
        id=job_id,
        run_id=run_id,
        run_url=f"https://api.github.com/repos/{repo}/actions/runs/{run_id}",
        node_id=_node_id("Workflow Job", job_id),
        head_sha=head_sha,
        url=f"https://api.github.com/repos/{repo}/actions/jobs/{job_id}",
        html_url=f"https://github.com/{repo}/actions/runs/{run_id}/job/{job_id}",
        status="completed",
        conclusion=spec.conclusion,
        created_at=isoformat(created),
        started_at=isoformat(began),
        completed_at=isoformat(t),
        name=spec.name,
        steps=steps,
        check_run_url=f"https://api.github.com/repos/{repo}/check-runs/{job_id}",
        labels=list(spec.labels),
        runner_id=runner_id,
        runner_name=runner_name,
        runner_group_id=group_id,
        runner_group_name=group_name,
        workflow_name=workflow_name,
        head_branch=head_branch,
        run_attempt=1,
    )
    return out


def _run_conclusion(jobs: Sequence[JobSpec]) -> str:
    conclusions = {j.conclusion for j in jobs}
    if conclusions & {"failure", "timed_out"}:
        return "failure"
    if "cancelled" in conclusions:
        return "cancelled"
    return "success"


# --------------------------------------------------------------------------- bundle


def bundle(
    *,
    run_id: int,
    repo: str,
    workflow_path: str,
    workflow_name: str,
    head_sha: str,
    jobs: Sequence[JobSpec],
    event: str = "pull_request",
    start: datetime,
    pull_requests: Sequence[dict[str, Any]] = (),
    display_title: str | None = None,
    actor: str = "pr-author",
    head_branch: str | None = None,
    run_number: int | None = None,
    referenced_workflows: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A completed run of ``workflow_path`` with ``jobs``, as ``{"workflow_run", "jobs"}``.

    ``head_branch`` defaults to the first pull request's head ref (else
    ``main``), ``display_title`` to that PR's number, ``run_number`` to a value
    derived from ``run_id``.  The run's conclusion is ``failure`` if any job
    failed or timed out, else ``cancelled`` if any was cancelled, else
    ``success``; ``updated_at`` is a few seconds after the last job completed.
    """
    if start.tzinfo is None:
        start = start.replace(tzinfo=timezone.utc)
    if head_branch is None:
        head_branch = pull_requests[0]["head"]["ref"] if pull_requests else "main"
    if display_title is None:
        display_title = (f"PR #{pull_requests[0]['number']}" if pull_requests else workflow_name)
    if run_number is None:
        run_number = run_id % 100_000

    job_objs = []
    per_label: dict[str, int] = {}
    for i, spec in enumerate(jobs, start=1):
        label = spec.labels[0] if spec.labels else ""
        job_objs.append(_job_object(
            spec, job_id=run_id * 1000 + i, run_id=run_id, repo=repo, head_sha=head_sha,
            head_branch=head_branch, workflow_name=workflow_name, start=start,
            ordinal=per_label.get(label, 0)))
        per_label[label] = per_label.get(label, 0) + 1
    last = max((datetime.fromisoformat(j["completed_at"].replace("Z", "+00:00")) for j in job_objs),
               default=start)

    workflow_id = _num("workflow", repo, workflow_path, digits=8)
    check_suite_id = _num("check-suite", run_id, digits=11)
    api = f"https://api.github.com/repos/{repo}"
    run = _run_template()
    run.update(
        id=run_id,
        name=workflow_name,
        node_id=_node_id("Workflow Run", run_id),
        check_suite_id=check_suite_id,
        check_suite_node_id=_node_id("CheckSuite", check_suite_id),
        head_branch=head_branch,
        head_sha=head_sha,
        path=workflow_path,
        run_number=run_number,
        event=event,
        display_title=display_title,
        status="completed",
        conclusion=_run_conclusion(jobs),
        workflow_id=workflow_id,
        url=f"{api}/actions/runs/{run_id}",
        html_url=f"https://github.com/{repo}/actions/runs/{run_id}",
        pull_requests=[copy.deepcopy(pr) for pr in pull_requests],
        created_at=isoformat(start),
        updated_at=isoformat(last + timedelta(seconds=7)),
        actor=_user(actor),
        run_attempt=1,
        referenced_workflows=[dict(r) for r in referenced_workflows],
        run_started_at=isoformat(start),
        triggering_actor=_user(actor),
        jobs_url=f"{api}/actions/runs/{run_id}/jobs",
        logs_url=f"{api}/actions/runs/{run_id}/logs",
        check_suite_url=f"{api}/check-suites/{check_suite_id}",
        artifacts_url=f"{api}/actions/runs/{run_id}/artifacts",
        cancel_url=f"{api}/actions/runs/{run_id}/cancel",
        rerun_url=f"{api}/actions/runs/{run_id}/rerun",
        previous_attempt_url=None,
        workflow_url=f"{api}/actions/workflows/{workflow_id}",
        head_commit={
            "id": head_sha,
            "tree_id": _sha("tree", head_sha),
            "message": display_title,
            "timestamp": isoformat(start - timedelta(minutes=9)),
            "author": {"name": actor, "email": f"{actor}@users.noreply.github.com"},
            "committer": {"name": actor, "email": f"{actor}@users.noreply.github.com"},
        },
        repository=_repository(repo),
        head_repository=_repository(repo),
    )
    return {"workflow_run": run, "jobs": job_objs}


def write_bundles(directory: str | Path, bundles: Sequence[dict[str, Any]]) -> list[Path]:
    """Write each bundle to ``<directory>/run-<id>.json`` (indent=1, trailing
    newline); return the paths in input order."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for b in bundles:
        p = directory / f"run-{b['workflow_run']['id']}.json"
        p.write_text(json.dumps(b, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        paths.append(p)
    return paths


# Modelled on pytorch's rocm-mi300.yml (@026a4bff): the tests run in the reusable `_rocm-test.yml`,
# whose matrix comes from the build caller's `test-matrix`; both callers share one `name:`.
PYTORCH_ROCM_MI300 = """name: rocm-mi300
on: push
jobs:
  linux-focal-rocm6_3-py3_10-build:
    name: linux-focal-rocm6.3-py3.10
    uses: ./.github/workflows/_linux-build.yml
    with:
      test-matrix: |
        { include: [
          { config: "default", shard: 1, num_shards: 2, runner: "linux.rocm.gpu.mi300.2" },
          { config: "default", shard: 2, num_shards: 2, runner: "linux.rocm.gpu.mi300.2" },
        ]}
  linux-focal-rocm6_3-py3_10-test:
    name: linux-focal-rocm6.3-py3.10
    uses: ./.github/workflows/_rocm-test.yml
    needs: linux-focal-rocm6_3-py3_10-build
    with:
      test-matrix: ${{ needs.linux-focal-rocm6_3-py3_10-build.outputs.test-matrix }}
"""
