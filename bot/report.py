"""The analysis as a report: markdown for people (a PR comment or the dashboard issue),
JSON for programs. Text that comes from job or step names is escaped, so a job
name cannot mention anyone, inject HTML, or forge foldbot's markers.

Pure: an `Analysis` in, strings out.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .analysis import Analysis, CarriedWall, SuggestionPatch, lane_savings
from .edit import option_lists, unified_diff
from .plan import Finding, Fold, ListReshard, Reshard
from .states import LaneFigures
from .timing import JobStats, RunTiming
from .workflow import JOB_TOTAL, Workflow

MARKER = "<!-- foldbot:report -->"
STATE_OPEN = "<!-- foldbot:state "
STATE_CLOSE = " -->"

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def md_escape(text: str) -> str:
    """Markdown-inert text: no formatting, no HTML, no @mentions, no comment markers."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = text.replace("@", "@\u200b")
    return text.replace("\r", " ").replace("\n", " ")


def md_text(text: str) -> str:
    """Prose whose `backticked` spans are inline code and the rest `md_escape`d: inert
    either way, whatever the text holds (unbalanced backticks make it all prose). No
    empty span is written and no two spans touch, so no longer backtick run can form
    that would leave a span's text outside code."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return md_escape(text)
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            if part:
                out.append(md_escape(part))
        elif part:
            if out and out[-1].endswith("`"):
                out.append("\u200b")
            out.append(code(part))
    return "".join(out)


def code(text: str) -> str:
    """Inline code that cannot be broken out of, nor open an HTML comment in the raw
    text (where foldbot's own markers live)."""
    text = text.replace("`", "'").replace("\r", " ").replace("\n", " ").replace("@", "@\u200b").replace("<!--", "<\u200b!--")
    return f"`{text}`"


def _min(seconds: float) -> str:
    return f"{seconds / 60:.0f}"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f}"


def job_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Per AMD job of the latest run, with where its time went."""
    rows = []
    for job in analysis.latest.amd_jobs:
        if not job.ran_tests and job.setup_seconds == 0:
            continue
        called = {"called_job": job.called} if job.called else {}
        rows.append({
            "name": job.name,
            "workflow_job": job.workflow_job,
            "setup_seconds": round(job.setup_seconds, 1),
            "test_seconds": round(job.test_seconds, 1),
            "other_seconds": round(job.other_seconds, 1),
            "queue_seconds": round(job.queue_seconds, 1),
            "setup_share": round(job.setup_share, 4),
            "html_url": job.html_url,
            "matrix": dict(job.ref.matrix),
            **called,
        })
    return rows


def totals(run: RunTiming) -> dict[str, Any]:
    setup, test, other = run.total("setup_seconds"), run.total("test_seconds"), run.total("other_seconds")
    return {
        "setup_seconds": round(setup, 1),
        "test_seconds": round(test, 1),
        "other_seconds": round(other, 1),
        "setup_share": round(setup / (setup + test), 4) if setup + test else 0.0,
        "runner_hours": round((setup + test + other) / 3600, 2),
        "jobs": sum(1 for j in run.amd_jobs if j.ran_tests),
    }


def _and_untested(run: RunTiming) -> str:
    """The AMD jobs of the run that spent setup time and ran no test (a build, one that failed in
    its setup), which the headline's setup figure counts too; "" when there are none."""
    untested = sum(1 for j in run.amd_jobs if not j.ran_tests and j.setup_seconds > 0)
    return f" that ran tests and {untested} that ran none" if untested else ""


def _skipped(analysis: Analysis) -> str:
    """The AMD jobs the latest run skipped, and why (`skipped_jobs`), as the headline says them;
    "" when it skipped none."""
    latest = analysis.latest
    skipped = skipped_jobs(analysis)
    if not skipped:
        return ""
    # (a job GitHub skipped because a job it needs failed: ROCm/iris's `test-editable` after a `test-git` shard)
    conclusions: dict[str, set[str]] = {}
    for job in latest.jobs:
        conclusions.setdefault(job.workflow_job or job.name, set()).add(str(job.conclusion))
    jobs = analysis.lane.workflow.jobs

    known: dict[str, list[str]] = {}

    def upstream(job_id: str) -> list[str]:
        """The jobs before it, by `needs:`, that failed or were cancelled (through the skipped ones); each
        job's read once."""
        if job_id not in known:
            known[job_id] = []  # (a cycle of needs, which GitHub refuses, ends here)
            found = []
            for need in jobs[job_id].needs if job_id in jobs else ():
                got = conclusions.get(need, set())
                if got & {"failure", "timed_out"}:
                    found.append(f"{code(need)} failed")
                elif "cancelled" in got:
                    found.append(f"{code(need)} was cancelled")
                elif got == {"skipped"}:
                    found += upstream(need)
            known[job_id] = list(dict.fromkeys(found))
        return known[job_id]

    after: dict[str, list[str]] = {}
    for name in skipped:
        if stopped := upstream(name):
            after.setdefault(" and ".join(stopped), []).append(name)
    gated = [name for name in skipped if not any(name in names for names in after.values())]
    why = "a dispatch of some jobs only" if latest.event == "workflow_dispatch" else "a gate"
    said = [f"{_listed(gated)} ({why})"] if gated else []
    said += [f"{_listed(names)} (after {stopped})" for stopped, names in after.items()]
    return "; ".join(said)


def _listed(names: list[str]) -> str:
    """Job ids for a sentence: each as code, at most three named."""
    shown = [code(name) for name in names]
    if len(shown) > 3:
        return f"{len(shown)} AMD jobs"
    return " and ".join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else shown[0]


def skipped_jobs(analysis: Analysis) -> list[str]:
    """The AMD workflow jobs the latest run skipped altogether (a gate, a dispatch of some jobs, a
    job they need failed): none of their jobs ran. A skipped job is an AMD one by its file's
    `runs-on`, or when earlier runs measured it on AMD runners (a reusable workflow's caller whose
    runners its file does not say: tritonbench's nightly MI350 benchmark, skipped on a schedule).
    Sorted."""
    run = analysis.latest
    measured = {name for name, stats in analysis.stats.items() if stats.samples}
    ran = {j.workflow_job or j.name for j in run.jobs if j.conclusion != "skipped"}
    return sorted({j.workflow_job or j.name for j in run.jobs if j.conclusion == "skipped"
                   and (j.is_amd or j.workflow_job in measured)} - ran)


def history_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Per workflow job over the history (only runs where it ran its tests); of a caller of a
    reusable workflow, each job it runs there too (`called_jobs`: its own figures pool them)."""
    def figures(stats: JobStats) -> dict[str, Any]:
        return {
            "samples": stats.samples,
            "shards": len(stats.shards),
            "setup_median_seconds": round(stats.setup.median, 1),
            "setup_p90_seconds": round(stats.setup.p90, 1),
            "test_median_seconds": round(stats.test.median, 1),
            "test_p90_seconds": round(stats.test.p90, 1),
            "setup_share": round(stats.share, 4),
        }

    out = []
    for job_id, stats in sorted(analysis.stats.items()):
        row = {"workflow_job": job_id, **figures(stats)}
        if called := analysis.called.get(job_id):
            row["called_jobs"] = [{"called_job": name, **figures(each)} for name, each in sorted(called.items())]
        out.append(row)
    return out


def _suggestion_json(item: Fold | Reshard | ListReshard) -> dict[str, Any]:
    if isinstance(item, ListReshard):
        return {
            "kind": "shard-list", "job": item.job, "writer": item.writer, "key": item.key,
            "configs": [{"config": t.config, "runner": t.runner, "from": t.from_count, "to": t.to_count,
                         "longest_p90_seconds": round(t.longest_p90_s, 1),
                         "predicted_longest_p90_seconds": round(t.predicted_longest_p90_s, 1),
                         "limit_seconds": round(t.limit_s, 1), "job_timeout_minutes": t.timeout_minutes,
                         "setup_median_seconds": round(t.setup_median_s, 1), "samples": t.samples} for t in item.trims],
            "provisional": item.provisional,
            "setup_cycles": item.setup_cycles_saved, "runner_hours": round(item.runner_seconds_saved / 3600, 2),
        }
    if isinstance(item, Fold):
        return {
            "kind": "fold", "job": item.job, "into": item.into, "shard": None if item.standalone else {item.shard_key: item.shard_value},
            "picked_by_id": item.selected_by_id, "host_extra_setup": list(item.host_extra_setup),
            "steps": list(item.steps), "timeout_minutes": item.timeout_minutes, "timeout_note": item.timeout_note,
            "samples": item.samples, "provisional": item.provisional,
            "suite_setup_median_seconds": round(item.suite_setup_median_s, 1),
            "suite_test_p90_seconds": round(item.suite_test_p90_s, 1),
            "suite_other_median_seconds": round(item.suite_other_median_s, 1),
            "host_budget_minutes": round(item.host_budget_minutes, 1), "host_limit_minutes": item.host_limit_minutes,
            "setup_cycles": item.setup_cycles_saved, "runner_hours": round(item.runner_seconds_saved / 3600, 2),
        }
    return {
        "kind": "reshard", "job": item.job, "from": item.from_count, "to": item.to_count, "flag": item.flag,
        "estimate": item.estimate, "predicted_longest_p90_seconds": round(item.predicted_longest_p90_s, 1),
        "limit_seconds": round(item.limit_s, 1),
        # the test step's own timeout (None: it has none); the minutes its tests have, the sooner of that and the
        # job's timeout less its other steps (`timeout_note` says so when the job's)
        "step_timeout_minutes": item.step_minutes, "tests_minutes": round(item.timeout_minutes, 1),
        "samples": item.samples, "provisional": item.provisional,
        "wall_clock_before_seconds": round(item.wall_before_s, 1), "wall_clock_after_seconds": round(item.wall_after_s, 1),
        "max_parallel": item.max_parallel, "waves_before": item.waves_before, "waves_after": item.waves_after,
        "log_runs": item.log_runs, "passed_as": item.passed_as, "callee": item.callee,
        "timeout_note": item.timeout_note or None,
        # the runs where a test hung past the limit, taken at its usual time there (`hung_past`: the sentence that says
        # which, how long, that time)
        "hung_runs": item.hung_runs, "hung_past": item.hung_past or None,
        "setup_cycles": item.setup_cycles_saved, "runner_hours": round(item.runner_seconds_saved / 3600, 2),
    }


#: The version of `to_json`'s shape, its first key: raised when a key is renamed or removed or
#: changes meaning (a new key does not raise it), so a consumer can refuse a shape it does not know.
#: 2: `suggestions[]` may hold `kind: "shard-list"` (its own keys: `writer`, `key`, `configs[]`), and
#: `by_hand[]` holds only the shard lists foldbot sets no count for.
JSON_SCHEMA_VERSION = 2


def to_json(analysis: Analysis, checks: str | None = None) -> dict[str, Any]:
    latest = analysis.latest
    savings = lane_savings(analysis)
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "workflow": latest.workflow_path,
        "workflow_name": latest.workflow_name,
        "runs": [r.run_id for r in analysis.runs],
        "head_sha": latest.head_sha,
        "jobs": job_rows(analysis),
        "totals": totals(latest),
        "skipped_jobs": skipped_jobs(analysis),
        "history": history_rows(analysis),
        "suggestions": [*map(_suggestion_json, (*analysis.plan.folds, *analysis.plan.reshards, *analysis.plan.lists))],
        "not_suggested": [{"job": f.job, "reason": f.reason} for f in analysis.plan.findings],
        "by_hand": [{"job": f.job, "reason": f.reason} for f in analysis.plan.by_hand],
        "savings": {
            "setup_cycles": sum(s["setup_cycles"] for s in savings),
            "runner_hours": round(sum(s["runner_hours"] for s in savings), 2),
            "per_lane": savings,
        },
        "warnings": list(analysis.warnings),
        "unmeasured": [{"subject": u.subject, "reason": u.reason, "fix": u.fix} for u in analysis.unmeasured],
        "overruns": list(analysis.plan.overruns),
        "patch": analysis.patch,
        "patch_id": analysis.patch_id,
        "checks": checks,
    }


#: Setup in a strong colour, tests in a calm one (mermaid draws the second bar over the first).
CHART_COLOURS = "#c0392b, #2e86c1"


def _chart(rows: list[dict[str, Any]]) -> list[str]:
    """A mermaid bar chart that reads in an 880-px comment: one bar per workflow job
    (its shards summed: runner-minutes), short labels, setup in red over tests in blue,
    and a legend line under it."""
    per_job: dict[str, list[float]] = {}
    named: dict[str, str] = {}  # a bar's key -> what its label is made of
    for row in rows:
        key = str(row.get("workflow_job") or row["name"])
        if called := row.get("called_job"):  # a job a reusable workflow runs: a bar of its own, `caller.<last level>`
            named[f"{key} / {called}"] = f"{key}." + re.sub(r"\s+", "-", str(called).rsplit(" / ", 1)[-1])
            key = f"{key} / {called}"
        totals_ = per_job.setdefault(key, [0.0, 0.0])
        totals_[0] += row["setup_seconds"] / 60
        totals_[1] += row["test_seconds"] / 60
    if not per_job:
        return []
    shown = sorted(per_job.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:16]
    labels = ", ".join(json.dumps(label) for label in _labels([named.get(job, job) for job, _ in shown]))
    top = max(setup + test for _, (setup, test) in shown)
    return [
        "```mermaid",
        "%%{init: {'themeVariables': {'xyChart': {'plotColorPalette': '" + CHART_COLOURS + "'}}}}%%",
        "xychart-beta horizontal",
        '    title "Runner-minutes per AMD job in the latest run"',
        f"    x-axis [{labels}]",
        f'    y-axis "minutes" 0 --> {int(top * 1.1) + 1}',
        f"    bar [{', '.join(f'{setup + test:.0f}' for _, (setup, test) in shown)}]",
        f"    bar [{', '.join(f'{test:.0f}' for _, (_, test) in shown)}]",
        "```",
        "",
        "Each bar is one workflow job (its shards added up" + ("; of a caller of a reusable workflow, each job it "
                                                                "runs there" if named else "")
        + "): **red** is setup, **blue** the tests"
        + (f"; the smallest {_plural(len(per_job) - len(shown), 'job')} left out" if len(per_job) > len(shown) else "") + ".",
    ]


def _label(job: str, width: int = 30) -> str:
    """A chart label: the workflow job id (or an unmapped job's name), at most `width`
    characters (cut in the middle: the lane's suffix stays, without which the label would be
    another lane's job id), nothing that needs quoting."""
    label = re.sub(r"[^A-Za-z0-9._-]", "", job)
    head = (width - 2) // 2
    return label if len(label) <= width else label[:head] + ".." + label[-(width - 2 - head):]


def _labels(jobs: list[str]) -> list[str]:
    """The jobs' chart labels, distinct (two bars of one label would read as one job):
    jobs whose labels shorten alike are numbered, in the chart's order."""
    labels = [_label(job) for job in jobs]
    out: list[str] = []
    for job, label in zip(jobs, labels):
        if labels.count(label) > 1:
            n = labels[: len(out)].count(label) + 1
            label = f"{n}." + _label(job, 30 - len(f"{n}."))
        out.append(label)
    return out


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _grouped_findings(findings: tuple[Finding, ...]) -> list[str]:
    """One line per reason, naming every job it applies to (a lane skips many jobs alike)."""
    jobs: dict[str, list[str]] = {}
    for finding in findings:
        jobs.setdefault(finding.reason, []).append(finding.job)
    return [f"{', '.join(code(job) for job in names)}: {md_text(reason)}" for reason, names in jobs.items()]


def _provisional(item: Fold | Reshard | ListReshard, min_samples: int) -> str:
    return f" *(provisional: fewer than {_plural(min_samples, 'run')})*" if item.provisional else ""


def _fold_md(f: Fold, min_samples: int) -> str:
    mark = _provisional(f, min_samples)
    where, host = (code(f.into), code(f.into)) if f.standalone else \
        (f"shard {f.shard_key}={f.shard_value} of {code(f.into)}", f"shard {f.shard_value}")
    return (
        f"- **Fold** {code(f.job)} into {where}{mark}: its job spends "
        f"{_min(f.suite_setup_median_s)} min on setup for {_min(f.suite_test_median_s)} min of tests "
        f"(p90 {f.suite_test_p90_s / 60:.1f} min; setup is {f.suite_share:.0%} of it; {_plural(f.samples, 'run')})"
        + (f" and {_min(f.suite_other_median_s)} min of other steps, which move with them"
           if f.suite_other_median_s >= 60 else "") + ". "
        f"{host[0].upper() + host[1:]} then needs at most {f.host_budget_minutes:.0f} of its {f.host_limit_minutes:.0f} min "
        f"(p90 setup, every step's timeout, and the p90 of a step with none). Step timeout {f.timeout_note}. "
        f"Saves 1 setup cycle, ~{_hours(f.runner_seconds_saved)} runner-hours per run; wall clock: {host} "
        f"runs ~{_min(f.suite_test_median_s + f.suite_other_median_s)} min longer, and the suite no longer waits for "
        "a runner of its own."
        + (f" Its tests then also run after {code(f.into)}'s own {', '.join(map(code, f.host_extra_setup))}, which "
           "its job did not run." if f.host_extra_setup else "")
        + (f" Its `if:` picks it by its id (a dispatch input that names jobs): once it is gone, naming {code(f.job)} "
           f"there runs nothing, so name {code(f.into)} instead." if f.selected_by_id else "")
    )


def _elsewhere(r: Reshard, analysis: Analysis) -> str:
    """What the count does in the other lanes whose copy of the job runs its shards in other waves."""
    out = ""
    for result in analysis.lanes:
        for wall in result.walls:
            if wall.measured_job != r.job:
                continue
            how = f"max-parallel {wall.max_parallel}" if wall.max_parallel else "no max-parallel: its shards run at once"
            effect = ("finishes **later**" if wall.later_s >= 60 else "finishes sooner" if wall.later_s <= -60 else
                      "keeps its wall clock")
            out += (f" In {code(result.lane.path)} ({how}) {code(wall.job)} {effect}: {_min(wall.before_s)} \u2192 "
                    f"{_min(wall.after_s)} min on these times.")
    return out


def _carried_later(analysis: Analysis) -> list[tuple[str, CarriedWall]]:
    """(lane path, its carried reshard) that makes that lane's copy of the job finish later."""
    return [(result.lane.path, wall) for result in analysis.lanes for wall in result.walls if wall.later_s >= 60]


def _reshard_md(r: Reshard, min_samples: int, analysis: Analysis | None = None) -> str:
    mark = _provisional(r, min_samples)
    delta = r.wall_after_s - r.wall_before_s
    waves = ""
    if r.max_parallel:
        waves = (f"; with max-parallel {r.max_parallel}, {r.from_count} shards run in {_plural(r.waves_before, 'wave')} "
                 f"and {r.to_count} in {_plural(r.waves_after, 'wave')}")
    if abs(delta) < 60:
        wall = "about the same wall clock"
    elif delta < 0:
        wall = (f"**faster** wall clock ({_min(r.wall_before_s)} → {_min(r.wall_after_s)} min: "
                f"setup dominates and fewer shards mean fewer setups in sequence)")
    else:
        wall = (f"**slower** wall clock ({_min(r.wall_before_s)} → {_min(r.wall_after_s)} min: "
                f"the shards ran in parallel, so each remaining shard carries more tests)")
    return (
        f"- **Reshard** {code(r.job)} from {r.from_count} to {r.to_count} shards{_passed(r)}{mark}: the longest shard is "
        f"predicted at {r.predicted_longest_p90_s / 60:.0f} min at p90 over {_plural(r.samples, 'run')}, within "
        f"{r.limit_s / 60:.0f} min ({r.limit_s / 60 / r.timeout_minutes:.0%} of "
        + (f"{r.timeout_minutes:.0f} min: {md_text(r.timeout_note)}). " if r.timeout_note
           else f"the {r.timeout_minutes:.0f} min step timeout). ")
        + f"Estimate from {r.estimate}. "
        + (f"{md_text(_sentence(r.hung_past))}; {'it is' if r.hung_files == 1 else 'they are'} taken at "
           f"{'its usual time' if r.hung_files == 1 else 'their usual times'} there. " if r.hung_past else "")
        + f"Saves {_plural(r.setup_cycles_saved, 'setup cycle')}, "
        f"~{_hours(r.runner_seconds_saved)} runner-hours per run; {wall}{waves}."
        + (_elsewhere(r, analysis) if analysis is not None else "")
    )


def _sentence(text: str) -> str:
    """A clause as a sentence of its own: its first letter upper case."""
    return text[:1].upper() + text[1:]


def _passed(r: Reshard) -> str:
    """Where a caller's count is changed: the `with:` it passes the reusable workflow that runs its shards."""
    return "" if r.passed_as is None else \
        f" (its `with: {r.passed_as}:`, the shard count it passes {code(r.callee or 'its reusable workflow')})"


def _list_md(item: ListReshard, min_samples: int, alone: str | None = None) -> str:
    """A shard list's trims: the counts, what they save and do to the wall clock, then what was
    measured for each configuration (its own line)."""
    counts = "; ".join(f"{_configuration(t.config, t.runner, item.trims)} {t.from_count} \u2192 "
                       f"{_plural(t.to_count, 'shard')}" for t in item.trims)
    if item.slower_by_s >= 60:
        wall = (f"**slower** wall clock (its longest shard {_min(item.wall_before_s)} \u2192 "
                f"{_min(item.wall_after_s)} min at p90: the shards run side by side, so each one left carries more "
                "tests)")
    else:
        wall = "about the same wall clock"
    head = (f"- **Trim the shard list** {code(item.key)} of {code(item.writer)} (the jobs of {code(item.job)})"
            f"{_provisional(item, min_samples)}: {counts}. Saves {_plural(item.setup_cycles_saved, 'setup cycle')}, "
            f"~{_hours(item.runner_seconds_saved)} runner-hours per run; {wall}.{_alone(alone)}")
    return "\n".join([head, *(f"  - {md_text(t.reason)}." for t in item.trims)])


def _configuration(config: str, runner: str | None, trims: Sequence[Any]) -> str:
    """A configuration of a shard list, with its runner when the trims hold it on several."""
    if sum(t.config == config for t in trims) < 2:
        return code(config)
    return f"{code(config)} on {code(runner)}" if runner is not None else f"{code(config)} with no runner"


def _diff_block(diff: str) -> list[str]:
    return ["```diff", diff.rstrip("\n").replace("```", "`\u200b``"), "```", ""]


def _changes_per_file(analysis: Analysis) -> list[str]:
    """One line per lane file the patch changes, saying what changes in it."""
    out = []
    for result in analysis.lanes:
        if result.edit is None or result.edit.before == result.edit.after:
            continue
        change = result.change
        parts = [f"{code(f.suite)} moves into "
                 f"{code(f.host) if f.shard_key is None else f'shard {f.shard_key}={f.shard_value} of {code(f.host)}'} as a step "
                 f"(timeout {f.timeout_minutes} min); its job goes{_and_references(result.lane.workflow, f.suite)}"
                 for f in change.folds]
        parts += [f"{code(r.job)} runs {_plural(r.to_count, 'shard')} instead of {r.from_count} ("
                  + (f"its list of shards, which `${{{{ {JOB_TOTAL} }}}}` counts" if r.flag == JOB_TOTAL
                     else f"its `with: {r.passed_as}:` passes {r.to_count}" if r.passed_as is not None
                     else f"{code(r.flag)} {r.to_count}") + ", and any `wait-for-*` count of its jobs)"
                  for r in change.reshards]
        parts += [f"{code(edit.writer)}'s {code(edit.key)} lists " + ", ".join(
                      f"{_configuration(t.config, t.runner, edit.trims)} with {_plural(t.to_count, 'shard')} instead of "
                      f"{t.from_count}" for t in edit.trims)
                  + " (`num_shards` lowered, the shards past it dropped)" for edit in change.lists]
        out.append(f"- {code(result.lane.path)}: " + "; ".join(parts) + ".")
    return out


def _and_references(workflow: Workflow, job_id: str) -> str:
    """What else the removed job leaves: the `needs:` that name it, the dispatch options that list it."""
    needed = any(job_id in job.needs for job in workflow.jobs.values())
    listed = any(job_id in options for options in option_lists(workflow.data))
    places = [*(["`needs:`"] if needed else []), *(["the dispatch options"] if listed else [])]
    return f", and with it from {' and '.join(places)}" if places else ""


def _neutral(r: Reshard, patch_id: str | None) -> str:
    if not r.neutral_count:
        return ""
    command = f": `/fold approve {patch_id}`" if patch_id else ""
    return (f" Or {r.neutral_count} shards, which keeps the wall clock and saves "
            f"{_plural(r.from_count - r.neutral_count, 'setup cycle')}{command}.")


def _alone(patch_id: str | None) -> str:
    return f" Alone: `/fold approve {patch_id}`." if patch_id else ""


def _slows(r: Reshard) -> bool:
    return r.wall_after_s - r.wall_before_s >= 60


def _verdict(analysis: Analysis, savings: list[dict[str, Any]]) -> list[str]:
    """The decision first: what the patch saves, what it does to wall clock, and the
    exact command(s) to approve it, or the part of it that slows no job. (Each job's wall clock,
    not the lane's: that ends with its longest job, which the other jobs beside it may be.)"""
    plan = analysis.plan
    carried = _carried_later(analysis)
    slower = [r for r in plan.reshards if _slows(r) or any(wall.measured_job == r.job for _, wall in carried)]
    faster = [r for r in plan.reshards if r.wall_after_s - r.wall_before_s <= -60]
    slower_lists = [item for item in plan.lists if item.slower_by_s >= 60]
    if slower or slower_lists:
        which = [*(f"{code(r.job)} +{_min(r.wall_after_s - r.wall_before_s)} min" for r in slower if _slows(r)),
                 *(f"{code(wall.job)} in {code(path)} +{_min(wall.later_s)} min" for path, wall in carried),
                 *(f"{code(item.job)} +{_min(item.slower_by_s)} min" for item in slower_lists)]
        wall = f"it would make {_plural(len(which), 'job')} finish later ({', '.join(which)})"
    elif faster:
        which = [f"{code(r.job)} {_min(r.wall_before_s)} \u2192 {_min(r.wall_after_s)} min" for r in faster]
        wall = (f"{'the resharded job finishes' if len(faster) == 1 else 'the resharded jobs finish'} sooner, with "
                f"fewer setups in sequence ({', '.join(which)})")
    else:
        wall = "about the same wall clock"
    out = [f"**Verdict:** the patch saves {_saves(savings)}; {wall}."]
    if analysis.patch_id:
        line = f"Approve it all: `/fold approve {analysis.patch_id}`"
        keep = [s for s in analysis.suggestions
                if not (s.kind == "reshard" and any(r.job == s.job for r in slower))
                and not (s.kind == "shard-list" and any(item.job == s.job for item in slower_lists))]
        if (slower or slower_lists) and keep and len(analysis.suggestions) > 1:
            line += "; or only what slows no job: " + " ".join(f"`/fold approve {s.patch_id}`" for s in keep)
        elif len(analysis.suggestions) > 1:
            line += "; or one suggestion alone (its command is on its line below)"
        out.append(line + ".")
    return out


def _unmeasured_md(analysis: Analysis, limit: int = 1000) -> list[str]:
    """What foldbot could not measure, each with its fix: never a silent all-clear."""
    if not analysis.unmeasured:
        return []
    out = ["", "#### Could not measure", ""]
    for u in analysis.unmeasured[:limit]:
        out.append(f"- {code(u.subject)}: {md_text(u.reason)}. **Fix:** {md_text(u.fix)}.")
    if len(analysis.unmeasured) > limit:
        out.append(f"- and {len(analysis.unmeasured) - limit} more")
    return out


def _saves(savings: list[dict[str, Any]]) -> str:
    cycles = sum(s["setup_cycles"] for s in savings)
    hours = sum(s["runner_hours"] for s in savings)
    per_lane = "; ".join(
        f"{code(s['lane'])}: {_plural(s['setup_cycles'], 'cycle')}, ~{s['runner_hours']:.1f} h" + ("" if s["measured"] else " (estimated from the measured lane)")
        for s in savings
    )
    return f"**{_plural(cycles, 'setup cycle')}** when every lane runs once, ~{hours:.1f} runner-hours ({per_lane})"


def pull_summary(analysis: Analysis, only: SuggestionPatch | None = None) -> str:
    """What the patch (or `only` that suggestion's) does and saves, for the pull request
    that commits it (kept in the report's state, so approving it reads no prose back)."""
    plan = analysis.plan
    if plan.empty:
        return ""
    folds = [f if only is None else f.alone() for f in plan.folds
             if only is None or (only.kind, only.job) == ("fold", f.job)]
    reshards = [r for r in plan.reshards if only is None or (only.kind, only.job) == ("reshard", r.job)]
    lists = [item for item in plan.lists if only is None or (only.kind, only.job) == ("shard-list", item.job)]
    lines = [f"This saves {_saves(lane_savings(analysis))}.", ""] if only is None else []
    lines += [_fold_md(f, analysis.min_samples) for f in folds]
    lines += [_reshard_md(r, analysis.min_samples, analysis) for r in reshards]
    lines += [_list_md(item, analysis.min_samples) for item in lists]
    if only is not None and only.kind == "reshard-neutral":
        r = next(r for r in plan.reshards if r.job == only.job)
        lines.append(f"- **Reshard** {code(r.job)} from {r.from_count} to {r.neutral_count} shards, the fewest that keep "
                     f"the lane's wall clock (its shards run in waves of {r.max_parallel}): saves "
                     f"{_plural(r.from_count - (r.neutral_count or r.from_count), 'setup cycle')} per run. "
                     f"(The most it could save: {r.to_count} shards, which would slow the lane.)")
    return "\n".join(lines)


def suggestion_states(analysis: Analysis) -> tuple[tuple[str, str, str], ...]:
    """(id, patch, summary) of each suggestion, for the report's state; none when the
    whole patch is the only one."""
    if len(analysis.suggestions) < 2:
        return ()
    return tuple((s.patch_id, s.patch, pull_summary(analysis, s)) for s in analysis.suggestions)


#: GitHub refuses an issue or comment body over 65,536 characters; foldbot stays under this.
BODY_LIMIT = 65_000


def to_markdown(analysis: Analysis, *, checks: str | None = None, state: dict[str, Any] | None = None,
                title: str = "foldbot: AMD CI setup report", skipped_note: str | None = None,
                limit: int = BODY_LIMIT, dashboard: str | None = None,
                other_lanes: Sequence[tuple[str, LaneFigures]] = ()) -> str:
    """The report. One that would be over `limit` characters (a run of a thousand jobs)
    is trimmed, in this order, and says so with where the rest is: the job table and the
    chart keep the jobs with most setup, the "looked at" details go, then the patch text
    (the state block still carries it, so it can be approved), then the long lists.

    `dashboard`: the URL of the lane's dashboard issue, for a PR's comment: that comment
    is about its PR's run (its jobs, the GPU jobs it skipped, the commands), and links
    the dashboard for the lane-wide diff and what was looked at, instead of repeating
    them on every PR.

    `other_lanes`: on the dashboard, the other lanes' headlines in their latest reports (the
    dashboard holds the full report of the lane whose run came last)."""
    rows = job_rows(analysis)
    pr = dashboard is not None
    full = _render(analysis, rows, checks, state, title, skipped_note, details=not pr, patch=not pr, chart=not pr,
                   dashboard=dashboard, other_lanes=other_lanes)
    if len(full) <= limit:
        return full
    shown, details, patch, lists = len(rows), not pr, not pr, 1000
    for _ in range(64):
        body = _render(analysis, rows, checks, state, title, skipped_note, shown=shown, details=details,
                       patch=patch, lists=lists, chart=not pr, dashboard=dashboard, other_lanes=other_lanes)
        if len(body) <= limit:
            return body
        if shown > 10:
            shown = max(10, shown // 2)
        elif details:
            details = False
        elif patch:
            patch = False
        elif lists > 5:
            lists //= 2
        else:
            break
    # Still too long (the state block itself, or text no step shortens): cut the prose, keep the state.
    tail = f"\n\n{state_block(state)}\n" if state is not None else "\n"
    note = "\n\n*(cut to fit GitHub's size limit)*"
    return body[: limit - len(tail) - len(note)].rsplit("\n", 1)[0] + note + tail


def _render(analysis: Analysis, rows: list[dict[str, Any]], checks: str | None, state: dict[str, Any] | None,
            title: str, skipped_note: str | None, *, shown: int | None = None, details: bool = True,
            patch: bool = True, lists: int = 1000, chart: bool = True, dashboard: str | None = None,
            other_lanes: Sequence[tuple[str, LaneFigures]] = ()) -> str:
    latest = analysis.latest
    t = totals(latest)
    trimmed = shown is not None and shown < len(rows)
    if trimmed:
        kept = set(sorted(range(len(rows)), key=lambda i: -rows[i]["setup_seconds"])[:shown])
        rows = [row for i, row in enumerate(rows) if i in kept]
    savings = lane_savings(analysis)
    plan = analysis.plan
    out = [MARKER, f"### {md_escape(title)}", ""]
    if not plan.empty:
        out += [*_verdict(analysis, savings), ""]
    run_links = ", ".join(f"[{r.run_id}]({r.html_url})" if r.html_url else str(r.run_id) for r in analysis.runs[-5:])
    more = f" and {len(analysis.runs) - 5} earlier" if len(analysis.runs) > 5 else ""
    out.append(
        f"As of {code(latest.head_sha[:12] or 'unknown')}, {md_escape(latest.workflow_name)} "
        f"({code(latest.workflow_path)}), runs {run_links}{more}."
    )
    out.append("")
    measured = any(stats.samples for stats in analysis.stats.values())
    if t["test_seconds"]:
        out.append(
            f"**{t['setup_share']:.0%} of AMD setup and test time in the latest run was setup**: "
            f"{_hours(t['setup_seconds'])} runner-hours of setup vs {_hours(t['test_seconds'])} of tests over "
            f"{_plural(t['jobs'], 'job')}{_and_untested(latest)}."
        )
        if skipped := _skipped(analysis):  # a gated run, or a dispatch of some jobs: its table is not the lane's
            out.append(f"It skipped {skipped}: the table shows the jobs it ran; the suggestions rest on every run above.")
        if latest.conclusion == "cancelled":  # its jobs stopped where they were: the shares are not the lane's
            out.append("It was **cancelled** (a newer run of its `concurrency` group replaced it, or someone cancelled "
                       "it): its jobs stopped where they were, in setup or in their tests, so its shares are not the "
                       "lane's; the suggestions rest on every run above, each job's only where it ran its tests.")
    elif not t["setup_seconds"]:  # (skipped, cancelled before a step, or no AMD job at all)
        skipped = _skipped(analysis)
        out.append("**No AMD job spent time on setup or tests in the latest run**"
                   + (f": it skipped {skipped}" if skipped else "") + "; see *Could not measure* below.")
    else:
        out.append(
            f"**No AMD test time was measured in the latest run** ({_hours(t['setup_seconds'])} runner-hours of setup "
            f"on AMD runners); see *Could not measure* below."
        )
    out.append("")
    if other_lanes:
        out += [*_other_lanes_md(other_lanes), ""]
    if trimmed or (dashboard is None and (not patch or not details)):
        where = f"every job is on [the run's page]({latest.html_url})" if latest.html_url else "every job is in the run"
        out += [f"*Trimmed to fit GitHub's size limit: {_plural(len(rows), 'job')} with most setup of "
                f"{t['jobs']} shown" + ("" if patch else ", the patch text left out (approving it still works)")
                + f"; {where}, and `foldbot analyze` prints the whole report.*", ""]
    # The job table: in view when short; folded in a PR's comment or when long, so that the
    # decision (verdict, chart, suggestions) stays at the top.
    folded = bool(rows) and (dashboard is not None or len(rows) > 15)
    table = [f"<details><summary>The {_plural(len(rows), 'AMD job')} of the latest run</summary>", ""] if folded else []
    if rows:
        table += ["| job | setup (min) | tests (min) | other (min) | setup share |", "|---|---:|---:|---:|---:|"]
    elif t["test_seconds"] or t["setup_seconds"]:  # (else the headline said it)
        table.append("No AMD job of the latest run spent time on setup or tests (see *Could not measure*).")
    for r in rows:
        name = f"[{md_escape(r['name'])}]({r['html_url']})" if r.get("html_url") else md_escape(r["name"])
        if r["workflow_job"] and not r["name"].startswith(r["workflow_job"]):
            name += f" {code(r['workflow_job'])}"  # the id the suggestions below name (aiter's `README Level 0+1`)
        table.append(f"| {name} | {_min(r['setup_seconds'])} | {_min(r['test_seconds'])} | {_min(r['other_seconds'])} | {r['setup_share']:.0%} |")
    table += ["", "</details>", ""] if folded else [""] if table else []
    if not folded:
        out += table
    if chart and (bars := _chart(rows)):
        out += [*bars, ""]
    if folded:
        out += table
    if skipped_note:
        out += [skipped_note, ""]
    out.append("#### Suggestions")
    if plan.empty and not measured and t["test_seconds"]:
        out.append("No suggestions: the AMD test time of these runs is of no job foldbot could tell (see *Could not measure*).")
    elif plan.empty and not measured:
        out.append("No suggestions: these runs hold no AMD test time to plan with (see *Could not measure*).")
    elif plan.empty:
        reasons = "; ".join(_grouped_findings(plan.findings)[:12]) or "no short standalone suite and no matrix with spare shards"
        out.append(f"Nothing to fold or reshard: {reasons}.")
    else:
        alone = {(s.kind, s.job): s.patch_id for s in analysis.suggestions} if len(analysis.suggestions) > 1 else {}
        alone.update({(s.kind, s.job): s.patch_id for s in analysis.suggestions if s.kind == "reshard-neutral"})
        out += [_fold_md(f, analysis.min_samples) + _alone(alone.get(("fold", f.job))) for f in plan.folds]
        out += [_reshard_md(r, analysis.min_samples, analysis) + _alone(alone.get(("reshard", r.job)))
                + _neutral(r, alone.get(("reshard-neutral", r.job))) for r in plan.reshards]
        out += [_list_md(item, analysis.min_samples, alone.get(("shard-list", item.job))) for item in plan.lists]
        unpatched = [r.lane.path for r in analysis.lanes if r.edit is None and not r.change.empty]
        if unpatched:  # (a change that did not check: the warnings say why)
            out += ["", f"**No patch for {', '.join(code(path) for path in unpatched)}**: written into it, these "
                        "suggestions leave a file that does not check (*Warnings* says why), so there is nothing to "
                        "approve there; a change by hand must avoid the same."]
    if plan.by_hand:
        out += ["", "**Shard lists left as they are** (measured; no count foldbot can set)", ""]
        out += [f"- {code(f.job)}: {md_text(f.reason)}." for f in plan.by_hand]
    overruns = [f for f in plan.findings if f.job in plan.overruns]
    if overruns:
        out += ["", "**Already over time**", ""]
        out += [f"- {code(f.job)} {md_text(f.reason)}." for f in overruns]
    left = tuple(f for f in plan.findings if f.job not in plan.overruns)
    if left and not plan.empty and details:
        out += ["", "<details><summary>Looked at and left alone</summary>", ""]
        out += [f"- {line}" for line in _grouped_findings(left)]
        out += ["", "</details>"]
    if dashboard is not None:
        if not t["test_seconds"] or not rows or not measured:
            out += _unmeasured_md(analysis, lists)  # what the lines above point at, in this comment
        lanes = ", ".join(code(e.path.rsplit("/", 1)[-1]) for e in analysis.edits)
        out += ["", f"The lane-wide diff ({lanes}), what was looked at and what could not be measured: "
                    f"[the dashboard]({dashboard}). Approve it here:"
                    + (f" `/fold approve {analysis.patch_id}`." if analysis.patch_id else " nothing to approve.")]
        if state is not None:
            out += ["", state_block(state)]
        return "\n".join(out) + "\n"
    out += _unmeasured_md(analysis, lists)
    if analysis.warnings:
        out += ["", "**Warnings**", ""]
        out += [f"- {md_escape(w)}" for w in analysis.warnings[:lists]]
        if len(analysis.warnings) > lists:
            out.append(f"- and {len(analysis.warnings) - lists} more")
    if analysis.patch and not patch:
        out += ["", f"Patch `{analysis.patch_id}` ({len(analysis.edits)} files) is too long to show here."]
        out.append(f"A maintainer can comment `/fold approve {analysis.patch_id}` to have foldbot open a pull request with this patch.")
    elif analysis.patch:
        first, *others = analysis.edits
        out += ["", "**What the patch changes**", "", *_changes_per_file(analysis), "",
                f"<details><summary>Patch <code>{analysis.patch_id}</code> ({_plural(len(analysis.edits), 'file')}; applies "
                f"with <code>git apply</code>)</summary>", "",
                *_diff_block(unified_diff([first]))]
        for edit in others:
            out += [f"The same change in {code(edit.path)}:", "", *_diff_block(unified_diff([edit]))]
        out += ["</details>", ""]
        if checks:
            out += [f"Verified: {md_text(checks)}.", ""]
        out.append(f"A maintainer can comment `/fold approve {analysis.patch_id}` to have foldbot open a pull request with this patch.")
    if state is not None:
        out += ["", state_block(state)]
    return "\n".join(out) + "\n"


def _other_lanes_md(lanes: Sequence[tuple[str, LaneFigures]]) -> list[str]:
    out = ["**The other lanes**, as of their latest reports (a lane's next run brings its full report here):", "",
           "| lane | latest run | setup share | setup (runner-h) | tests (runner-h) | AMD jobs |",
           "|---|---|---:|---:|---:|---:|"]
    for path, f in lanes:
        run = f"[{f.run_id}]({f.html_url})" if f.html_url else str(f.run_id)
        total = f.setup_seconds + f.test_seconds
        share = f"{f.setup_seconds / total:.0%}" if total else "not measured"
        out.append(f"| {code(path.rsplit('/', 1)[-1])} | {run} | {share} | {_hours(f.setup_seconds)} | "
                   f"{_hours(f.test_seconds)} | {f.jobs} |")
    return out


def state_block(state: dict[str, Any]) -> str:
    """Hidden JSON that later commands read back; `--` is escaped so it cannot end the comment."""
    return STATE_OPEN + json.dumps(state, sort_keys=True, separators=(",", ":")).replace("--", "\\u002d\\u002d") + STATE_CLOSE
