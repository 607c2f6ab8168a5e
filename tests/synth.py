"""A plausible run history for any workflow file, to exercise the analysis on every
real workflow shape we have (SGLang's current files and 40 historical versions).

Independent of foldbot's own parser: jobs, matrices and names are read with plain
`yaml.safe_load` and a tiny evaluator for the expressions these files use in
`name:` and `runs-on:` (`format(...)`, `matrix.x`, `inputs.x || 'default'`).
"""

from __future__ import annotations

import itertools
import random
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import yaml

from tests.builders import Step, bundle, job, skipped_job

AMD = re.compile(r"mi\d[\dx]{2}|gfx9\d{2}|rocm|\bamd\b", re.I)
_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    if True in data and "on" not in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def _split_args(text: str) -> list[str]:
    out, depth, quote, cur = [], 0, False, ""
    for ch in text:
        if ch == "'":
            quote = not quote
        if not quote and ch in "([":
            depth += 1
        if not quote and ch in ")]":
            depth -= 1
        if ch == "," and not depth and not quote:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def evaluate(expr: str, matrix: dict[str, Any]) -> str:
    """What GitHub would print for a name / runs-on expression with empty inputs."""
    expr = expr.strip()
    m = re.fullmatch(r"format\(\s*'((?:[^']|'')*)'\s*,(.*)\)", expr, re.S)
    if m:
        literal, args = m.group(1).replace("''", "'"), [evaluate(a, matrix) for a in _split_args(m.group(2))]
        return re.sub(r"\{(\d+)\}", lambda g: args[int(g.group(1))] if int(g.group(1)) < len(args) else "", literal)
    ref = re.fullmatch(r"matrix\.([\w-]+)", expr)
    if ref:
        return str(matrix.get(ref.group(1), ""))
    if "||" in expr:
        return evaluate(expr.rsplit("||", 1)[1], matrix)
    quoted = re.fullmatch(r"'((?:[^']|'')*)'", expr)
    if quoted:
        return quoted.group(1).replace("''", "'")
    return ""


def render(template: Any, matrix: dict[str, Any]) -> str:
    return _EXPR.sub(lambda m: evaluate(m.group(1), matrix), str(template))


def combinations(job: dict[str, Any]) -> list[dict[str, Any]]:
    matrix = ((job.get("strategy") or {}).get("matrix")) if isinstance(job.get("strategy"), dict) else None
    if not isinstance(matrix, dict):
        return [{}]
    axes = {k: v for k, v in matrix.items() if isinstance(v, list) and k not in ("include", "exclude")}
    if axes:
        keys = list(axes)
        return [dict(zip(keys, values)) for values in itertools.product(*(axes[k] for k in keys))]
    include = matrix.get("include")
    if isinstance(include, list) and include:
        return [dict(e) for e in include if isinstance(e, dict)]
    return [{}]


def step_names(job: dict[str, Any]) -> list[str]:
    names = []
    for i, step in enumerate(job.get("steps") or []):
        if step.get("name"):
            names.append(render(step["name"], {}))
        elif step.get("uses"):
            names.append(f"Run {step['uses']}")
        elif step.get("run"):
            names.append(f"Run {str(step['run']).strip().splitlines()[0]}")
        else:
            names.append(f"Step {i + 1}")
    return names


_SETUP = re.compile(r"(Checkout|Run actions/checkout|Ensure VRAM|Download artifacts|Run actions/download-artifact|Start CI container|"
                    r"Setup docker|Start Special Container|Install dependencies|Setup kernel caches|Diagnose HF cache)")


def api_name(job_id: str, job: dict[str, Any], values: dict[str, Any]) -> str:
    if job.get("name") is not None:
        return render(job["name"], values)
    if values:
        return f"{job_id} ({', '.join(str(v) for v in values.values())})"
    return job_id


def synthetic_history(text: str, path: str, *, runs: int = 4, seed: int = 7) -> list[dict[str, Any]]:
    """Runs in which every AMD GPU job ran: setup 100-155 min; tests short (3-8 min)
    for about a third of the standalone jobs, 15-80 min otherwise."""
    data = _load(text)
    rng = random.Random(f"{seed}:{path}")
    profiles: dict[str, float] = {}
    for job_id, spec in data["jobs"].items():
        profiles[job_id] = rng.choice([5.0, 5.0, 30.0, 45.0, 70.0])
    start = datetime(2026, 8, 1, 8, tzinfo=timezone.utc)
    out = []
    for r in range(runs):
        jobs = []
        for job_id, spec in data["jobs"].items():
            if not isinstance(spec, dict):
                continue
            if spec.get("uses"):
                jobs.append(job(f"{job_id} / run", [Step("Set up job", 0.1), Step("Complete job", 0.1)], ["ubuntu-latest"]))
                continue
            for values in combinations(spec):
                runs_on = spec.get("runs-on")
                labels = [render(x, values) for x in (runs_on if isinstance(runs_on, list) else [runs_on])] if runs_on else []
                name = api_name(job_id, spec, values)
                if not any(AMD.search(label) for label in labels):
                    jobs.append(job(name, [Step("Set up job", 0.1), Step("Complete job", 0.1)], labels or ["ubuntu-latest"]))
                    continue
                if rng.random() < 0.1:
                    jobs.append(skipped_job(name))
                    continue
                names = step_names(spec)
                setup_names = [n for n in names if _SETUP.match(n)]
                test_names = [n for n in names if n not in setup_names]
                setup = rng.uniform(100, 155)
                per = setup / max(len(setup_names), 1)
                minutes = profiles[job_id] * rng.uniform(0.8, 1.2)
                steps = [Step("Set up job", 0.1)]
                for n in names:
                    if n in setup_names:
                        steps.append(Step(n, per))
                    else:
                        steps.append(Step(n, minutes / max(len(test_names), 1)))
                steps.append(Step("Complete job", 0.1))
                jobs.append(job(name, steps, labels))
        out.append(bundle(
            run_id=5_000_000_000 + r, repo="sgl-project/sglang", workflow_path=path,
            workflow_name=str(data.get("name") or path), head_sha=f"{r:040x}", jobs=jobs,
            start=start + timedelta(days=r),
        ))
    return out
