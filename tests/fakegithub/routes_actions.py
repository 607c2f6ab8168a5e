"""GitHub Actions: workflows, runs, jobs, dispatches and re-runs."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
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
)
from .state import Dispatch, Workflow
from .workflow_yaml import (
    DispatchRejected,
    dispatch_inputs,
    load_workflow,
    resolve_inputs,
    run_name,
)

READ = (("actions", "read"),)
WRITE = (("actions", "write"),)
DISPATCH_DOCS = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"
MAX_DISPATCH_INPUTS = 25
# ``status`` filters on a run's status or its conclusion.
FAILED_CONCLUSIONS = ("failure", "cancelled", "timed_out", "startup_failure")


def _workflow(call: Call) -> Workflow:
    workflow = call.repo.workflow(call.params["workflow_id"])
    if workflow is None:
        raise not_found()
    return workflow


def _run(call: Call) -> dict[str, Any]:
    run = call.repo.runs.get(call.int_param("run_id"))
    if run is None:
        raise not_found()
    return run


def _attempt(call: Call, run: dict[str, Any]) -> int:
    attempt = call.int_param("attempt_number")
    if not 1 <= attempt <= int(run.get("run_attempt", 1)):
        raise not_found()
    return attempt


# -- workflows --------------------------------------------------------------------


def list_workflows(call: Call) -> Reply:
    repo = call.repo
    items = [call.fake.render.workflow(repo, workflow) for workflow in repo.workflows.values()]
    return paginate(call, items, "workflows")


def get_workflow(call: Call) -> Reply:
    return Reply(200, call.fake.render.workflow(call.repo, _workflow(call)))


# -- runs -------------------------------------------------------------------------


def _filtered_runs(call: Call, runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    query = call.query
    checks: dict[str, Callable[[dict[str, Any], str], bool]] = {
        "branch": lambda run, value: run.get("head_branch") == value,
        "event": lambda run, value: run.get("event") == value,
        "head_sha": lambda run, value: run.get("head_sha") == value,
        "actor": lambda run, value: str(run.get("actor", "")).lower() == value.lower(),
        "check_suite_id": lambda run, value: str(run.get("check_suite_id")) == value,
        "status": lambda run, value: value in (run.get("status"), run.get("conclusion")),
    }
    now, unlisted = time.monotonic(), call.fake.unlisted_until
    selected = [
        run
        for run in runs
        if all(check(run, query[name]) for name, check in checks.items() if query.get(name))
        and unlisted.get(int(run["id"]), 0.0) <= now
    ]
    # Newest first, like GitHub.
    return sorted(
        selected, key=lambda run: (str(run.get("created_at")), int(run["id"])), reverse=True
    )


def _render_runs(call: Call, runs: list[dict[str, Any]]) -> Reply:
    render = call.fake.render
    items = [render.run(call.repo, run) for run in runs]
    if call.query.get("exclude_pull_requests") == "true":
        for item in items:
            item["pull_requests"] = []
    return paginate(call, items, "workflow_runs")


def list_workflow_runs(call: Call) -> Reply:
    workflow = _workflow(call)
    runs = [run for run in call.repo.runs.values() if run.get("workflow_id") == workflow.id]
    return _render_runs(call, _filtered_runs(call, runs))


def list_repo_runs(call: Call) -> Reply:
    return _render_runs(call, _filtered_runs(call, call.repo.runs.values()))


def get_run(call: Call) -> Reply:
    body = call.fake.render.run(call.repo, _run(call))
    if call.query.get("exclude_pull_requests") == "true":
        body["pull_requests"] = []
    return Reply(200, body)


def get_run_attempt(call: Call) -> Reply:
    run = _run(call)
    return Reply(200, call.fake.render.run(call.repo, run, attempt=_attempt(call, run)))


# -- jobs ---------------------------------------------------------------------------


def _render_jobs(call: Call, jobs: list[dict[str, Any]]) -> Reply:
    render = call.fake.render
    return paginate(call, [render.job(call.repo, job) for job in jobs], "jobs")


def list_run_jobs(call: Call) -> Reply:
    run = _run(call)
    filter_ = call.query.get("filter", "latest")
    if filter_ not in ("latest", "all"):
        raise invalid_field("Job", "filter", f"filter must be one of latest, all; got {filter_!r}")
    attempt = None if filter_ == "all" else int(run.get("run_attempt", 1))
    return _render_jobs(call, call.fake.jobs_of(run["id"], attempt))


def list_attempt_jobs(call: Call) -> Reply:
    run = _run(call)
    return _render_jobs(call, call.fake.jobs_of(run["id"], _attempt(call, run)))


def get_job(call: Call) -> Reply:
    job = call.repo.jobs.get(call.int_param("job_id"))
    if job is None:
        raise not_found()
    return Reply(200, call.fake.render.job(call.repo, job))


def download_job_logs(call: Call) -> Reply:
    """302 to a URL signed for a minute, on another "host" (`/_blob/...`, no token), as
    GitHub answers; 404 for a job without a log (never ran, or past retention)."""
    fake = call.fake
    job = call.repo.jobs.get(call.int_param("job_id"))
    if job is None or job["id"] not in fake.job_logs:
        raise not_found()
    signature = secrets.token_urlsafe(16)
    fake.log_links[signature] = (job["id"], time.time() + fake.log_link_lifetime)
    location = f"{fake.base_url}/_blob/job-logs/{job['id']}.txt?sv=2021-08-06&se=soon&sig={signature}"
    return Reply(302, raw=b"", content_type="text/html", headers={"location": location})


# -- dispatch and re-runs -------------------------------------------------------------


def _dispatch_error(message: str) -> ApiError:
    return ApiError(422, message, documentation_url=DISPATCH_DOCS)


def dispatch(call: Call) -> Reply:
    repo, fake = call.repo, call.fake
    workflow = _workflow(call)
    body = call.json(required=True)
    if not fake.dispatch_takes_run_details and "return_run_details" in body:
        # GitHub Enterprise Server before the parameter (3.19: benc-uk/workflow-dispatch#86); nothing starts
        raise ApiError(422, '"return_run_details" is not a permitted key.', documentation_url=DISPATCH_DOCS)
    if not body.get("ref"):
        raise missing_fields("WorkflowDispatch", ["ref"])
    ref = str(body["ref"])
    inputs = body.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise invalid_field(
            "WorkflowDispatch", "inputs", "For 'properties/inputs', inputs is not an object."
        )
    if len(inputs) > MAX_DISPATCH_INPUTS:
        raise invalid_field(
            "WorkflowDispatch",
            "inputs",
            f"For 'properties/inputs', no more than {MAX_DISPATCH_INPUTS} properties are allowed; "
            f"{len(inputs)} were supplied.",
        )
    if workflow.state != "active":
        raise _dispatch_error("Cannot trigger a 'workflow_dispatch' on a disabled workflow")
    # A branch or tag name (optionally fully qualified); commit SHAs are not accepted.
    full_ref = next(
        (
            candidate
            for candidate in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}")
            if candidate.startswith(("refs/heads/", "refs/tags/")) and candidate in repo.refs
        ),
        None,
    )
    if full_ref is None:
        raise _dispatch_error(f"No ref found for: {ref}")
    sha = repo.refs[full_ref]
    entry = fake.store.lookup(fake.store.commit(sha).tree, workflow.path)
    if entry is None or entry.type != "blob":
        raise ApiError(404, "Not Found", documentation_url=DISPATCH_DOCS)
    try:
        document = load_workflow(fake.store.blob(entry.sha).data.decode("utf-8", "replace"))
        spec = dispatch_inputs(document)
        if spec is None:
            raise DispatchRejected("Workflow does not have 'workflow_dispatch' trigger")
        resolved = resolve_inputs(spec, inputs)
        name = fake.workflow_name(repo, workflow, sha)
        title = run_name(document, resolved, name, call.principal.login or fake.bot.login)
    except DispatchRejected as exc:
        raise _dispatch_error(str(exc)) from exc
    branch = full_ref.removeprefix("refs/heads/").removeprefix("refs/tags/")
    run = fake.add_run(
        repo,
        workflow_id=workflow.id,
        name=name,
        event="workflow_dispatch",
        head_branch=branch,
        head_sha=sha,
        status="queued",
        display_title=title,
        actor=call.principal.login or fake.bot.login,
    )
    record = Dispatch(
        repo.full_name, workflow.id, workflow.path, ref, dict(inputs), resolved, run["id"]
    )
    fake.dispatches.append(record)
    if fake.on_dispatch is not None:
        fake.on_dispatch(record, run)
    details = body.get("return_run_details") is True and fake.dispatch_returns_run_details
    if not details and fake.dispatch_listing_lag > 0:
        fake.unlisted_until[int(run["id"])] = time.monotonic() + fake.dispatch_listing_lag
    if details:
        rendered = fake.render.run(repo, run)
        return Reply(
            200,
            {
                "workflow_run_id": run["id"],
                "run_url": rendered["url"],
                "html_url": rendered["html_url"],
            },
        )
    return Reply.empty()


def _rerun(call: Call, *, failed_only: bool) -> Reply:
    fake = call.fake
    run = _run(call)
    previous = int(run.get("run_attempt", 1))
    old_jobs = fake.jobs_of(run["id"], previous)
    stamp = fake.clock.stamp_after(run["updated_at"])
    run.update(
        run_attempt=previous + 1,
        status="queued",
        conclusion=None,
        updated_at=stamp,
        run_started_at=stamp,
    )
    fresh: list[dict[str, Any]] = []
    for job in old_jobs:
        rerun = not failed_only or job.get("conclusion") in FAILED_CONCLUSIONS
        clone = {key: value for key, value in job.items() if key not in ("id", "node_id")}
        clone["run_attempt"] = previous + 1
        if rerun:
            clone.update(
                status="queued",
                conclusion=None,
                created_at=stamp,
                started_at=stamp,
                completed_at=None,
                steps=[],
                runner_id=None,
                runner_name=None,
                runner_group_id=None,
                runner_group_name=None,
            )
        fresh.append(clone)
    fake.add_jobs(run["id"], fresh)
    return Reply(201, {})


def rerun_failed_jobs(call: Call) -> Reply:
    return _rerun(call, failed_only=True)


def rerun(call: Call) -> Reply:
    return _rerun(call, failed_only=False)


ROUTES = [
    Route("GET", "/actions/workflows", list_workflows, permissions=READ),
    Route("GET", "/actions/workflows/{workflow_id}", get_workflow, permissions=READ),
    Route("GET", "/actions/workflows/{workflow_id}/runs", list_workflow_runs, permissions=READ),
    Route("POST", "/actions/workflows/{workflow_id}/dispatches", dispatch, permissions=WRITE),
    Route("GET", "/actions/runs", list_repo_runs, permissions=READ),
    Route("GET", "/actions/runs/{run_id}", get_run, permissions=READ),
    Route("GET", "/actions/runs/{run_id}/jobs", list_run_jobs, permissions=READ),
    Route(
        "GET", "/actions/runs/{run_id}/attempts/{attempt_number}", get_run_attempt, permissions=READ
    ),
    Route(
        "GET",
        "/actions/runs/{run_id}/attempts/{attempt_number}/jobs",
        list_attempt_jobs,
        permissions=READ,
    ),
    Route("POST", "/actions/runs/{run_id}/rerun", rerun, permissions=WRITE),
    Route("POST", "/actions/runs/{run_id}/rerun-failed-jobs", rerun_failed_jobs, permissions=WRITE),
    Route("GET", "/actions/jobs/{job_id}", get_job, permissions=READ),
    Route("GET", "/actions/jobs/{job_id}/logs", download_job_logs, permissions=READ),
]
