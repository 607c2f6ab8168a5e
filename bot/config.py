"""Settings: the repository's `.github/foldbot.yml` and its defaults.

The defaults fit SGLang's AMD CI as it is, so a repository like it needs no file.
Pure: text in, a frozen `RepoConfig` out, or a `ConfigError` that names every problem, each by its key.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
import reprlib
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

CONFIG_PATH = ".github/foldbot.yml"


class ConfigError(ValueError):
    """A `.github/foldbot.yml` that cannot be used: its problems, each naming its key."""

    def __init__(self, *problems: str) -> None:
        super().__init__(f"{CONFIG_PATH}: {'; '.join(problems)}")
        self.problems = problems


@dataclass(frozen=True)
class StepRule:
    """Steps whose name matches `pattern` (a regex, searched from the start) are `category`."""

    pattern: str
    category: str  # "setup" | "test" | "other"

    @functools.cached_property
    def _regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)

    def matches(self, name: str, bare: str | None = None) -> bool:
        """Whether the pattern matches the name from its start, or from its first word (`bare`, the name's
        `bare_name` if the caller has it: `📦 Build wheel` is a build, as `Build wheel` is; a rule written with the
        emoji still takes it)."""
        compiled = self._regex
        if compiled.match(name) is not None:
            return True
        bare = bare_name(name) if bare is None else bare
        return bare is not name and compiled.match(bare) is not None


def bare_name(name: str) -> str:
    """A step's name less the emoji and other symbols it begins with, their variation selectors and joiners, and the
    blanks after them (ROCm/TransformerEngine names each step so: `📦 Build wheel inside container`, `⬆️ Upload logs
    on failure`, `🧪 Run tests`); the name itself (the same object) when it begins with none, or with nothing else."""
    if not name or name[0].isascii() and name[1:2] not in _KEYCAP:  # (`1️⃣ Build`: a digit, then U+FE0F U+20E3)
        return name
    at = 1 if name[0].isascii() else 0  # (a keycap's digit)
    while at < len(name) and (name[at].isspace() or name[at] == "\u2139"
                              or unicodedata.category(name[at]) in _DECORATION):
        at += 1
    return name[at:] if 0 < at < len(name) else name


#: The Unicode categories of what a name may begin with before its words: symbols (emoji are `So`), the marks and
#: format characters emoji are written with (U+FE0F, U+200D).
#: A bullet (`•`, `‼️`) too; `ℹ️` is a letter to Unicode, and taken by itself.
_DECORATION = frozenset({"So", "Sk", "Sm", "Sc", "Mn", "Me", "Cf", "Po"})
_KEYCAP = ("\ufe0f", "\u20e3")


CATEGORIES = ("setup", "test", "other")

#: A step that sets up and then tests, in one: `Build and run tests`, `Configure, Build, and Test`, `Build & Test
#: (ROCm 6.4)`, `Build and test ${{ matrix.service }}`, `Build, test, and sign release`, `Install deps, run tests`.
#: After the joining word a test *verb*: `test`, or run/execute ... tests; not `Build and push test image`,
#: `Configure and Build Tests`, `Build and install tests`, `Install torch, pytest`, `Install speedtest-cli and test
#: network` (aiter's check of the network, before its tests), `Install wheel and test dependencies` (ROCm/vllm).
COMBINED_TEST = StepRule(
    r"(?i)(?:set ?up|install|build|compile|configure|cmake|make|prepare)\b[^&+]*?(?:,? and|,|&|\+|then)\s*(?:then\s+)?"
    r"(?:(?:run|execute)\s+(?:the\s+|all\s+)?(?:[\w+.-]+\s+)?(?:tests?|unit ?tests?|unittests?|ctest|pytest|benchmarks?)\b"
    r"|test(?:s|ing)?\b(?!\s+(?:network|connectivity|connection|internet|dependenc\w*|deps|requirements|data(?:sets?)?"
    r"|env\w*|images?|files|fixtures|assets|models|weights|tools|utils|extras)\b))",
    "test")

#: A word of a step's name that says it runs tests (at its start, or after a space, `(` or `+`): the test rule's
#: words, which the rules before it that take some such names (`... Test Results`, a venv made) leave to it.
TEST_WORD = (r"(?:.*[\s(+])?(?:(?:smoke-?)?test(?!ed\b)\w*|unit ?tests?|pytest|(?:micro-?)?bench\w*|eval\w*|accuracy|correctness"
             r"|suites?|regressions?|stress\w*|smoke|robustness)\b")

#: A name that goes on to test after its first words (`Activate venv and Run Test`, `Extract and run smoke`): the new
#: setup and other verbs leave it to COMBINED_TEST / the test rules.
THEN_TESTS = (r"(?![^&+]*?(?:,? and|,|&|\+|then)\s*(?:then\s+)?(?:(?:run|execute)\s+(?:the\s+|all\s+)?(?:[\w+.-]+\s+)?"
              r"(?:tests?|unit ?tests?|unittests?|ctest|pytest|benchmarks?|smoke|suites?)\b|test(?:s|ing)?\b))")

#: Ordered; the first rule that matches wins. No match: an action step (`uses:`, or a
#: name GitHub gives one, `Run owner/repo@ref`) is "setup", any other step "other".
DEFAULT_STEP_RULES: tuple[StepRule, ...] = (
    # The steps GitHub adds itself (actions/runner JobExtension.cs, ContainerOperationProvider.cs): every
    # project; `Initialize containers` / `Stop containers` in container jobs (triton's AMD lane).
    RUNNER_STEPS := StepRule(r"(?:Set up job|Initialize containers|Stop containers|Complete job)$", "setup"),
    # A step of the workflow's own that begins with `Post` and sends results after the tests: aiter `Post perf
    # results to PR` (a github-script comment), rccl `Post test report upload`, `Post Build Upload`. (GitHub's
    # post-step of an action that uploads, `Post Upload results`, lands here too: it takes no time.)
    StepRule(r"(?i)post (?:\S+ )*?(?:results?|reports?|comments?|uploads?)\b", "other"),
    # `Pre <step>` / `Post <step>`: pre- and post-steps of actions (`Post Run actions/checkout@v4`,
    # `Post Checkout code`, `Post Cache build dependencies`): every project.
    ACTION_PRE_POST := StepRule(r"(?:Pre|Post) \S", "setup"),
    STOP_AND_REMOVE := StepRule(r"Stop and remove containers$", "setup"),  # SGLang (older lanes)
    # Freeing the GPUs / the machine before the tests: aiter `Clean up Rocm processes`, JAX `Clean up old
    # runs`, SGLang `Ensure VRAM is clear`, `Clean up prior Slurm jobs from this runner`.
    StepRule(r"(?i)(?:clean ?up|kill|reset) (?:old|previous|prior|stale|leftover|rocm|gpus?|vram)\b", "setup"),
    # rocm-libraries `Clean stale GPU processes` (the same script runs after the tests as `Clean GPU processes`: other).
    StepRule(r"(?i)clean (?:old|previous|prior|stale|leftover)\b", "setup"),
    StepRule(r"(?i)ensure (?:vram|gpus?|the gpus?)\b", "setup"),
    # `Pre-<phase>` steps, GitHub's `Pre ` for an action's pre-step written by hand: TheRock `Pre-job cleanup GPU
    # processes on Linux`, `Pre-job cleanup processes on Windows`; xformers `Pre-build clean`. Their `Post-...`
    # twins run after the tests: other (below).
    # (anywhere in the name: SemiAnalysisAI/InferenceX `Resource cleanup (pre-run)`, `Repair stale git state (pre-run)`;
    # their `(post-run)` twins after the benchmark are other)
    StepRule(r"(?i).*\bpre-(?:job|build|run|test)\b", "setup"),
    # pytorch/test-infra linux_job_v2.yml's first step `Clean workspace` (its last, `Clean workspace after tear
    # down`, is other).
    StepRule(r"(?i)clean (?:the )?workspace$", "setup"),
    # Checking the runner and its GPUs before the tests: TheRock `Runner health status`, `Driver / GPU sanity check`.
    # gpu-mode/kernelbot `Distributed Health Check` (a collective across the GPUs, beside its `GPU Health Check`).
    # (not one that says it tests, or follows them: `RCCL health check tests`, `GPU health check after tests`)
    StepRule(r"(?i)(?!" + TEST_WORD + r")(?:(?:runner|gpus?|node|machine|system|host|distributed|multi-gpu|network|rccl"
             r"|nccl) )?health (?:status|checks?|settings)\b", "setup"),
    # ... of anything installed (ROCm/rocm-examples `Wheel sanity check`: `rocm-sdk test` of the ROCm wheel, before the
    # build and tests), not one that says it tests
    StepRule(r"(?i)(?!" + TEST_WORD + r")(?:.*\s)?(?:wheel|package|install\w*|build|drivers?|gpus?|rocm|devices?"
             r"|environment|runner|node|system|host|toolchain|sdk)s?\b.*\bsanity checks?\b", "setup"),
    # pytorch/helion's looks at the device before its tests: `CUDA Compute Check`, `XPU Compute Check`, `MPS
    # Availability Check`, `Inductor Worker Check` (`python -c "import torch; assert torch.cuda.is_available()"`).
    # (not one after the tests: `Post-test worker check`)
    StepRule(r"(?i)(?!" + TEST_WORD + r"|.*\b(?:post-(?:test|run|job|build)|after)\b)(?:\S+ ){0,3}"
             r"(?:compute|availability|worker) checks?$",
             "setup"),
    # -- other: results, logs, reports, teardown, lint; before the test rules, as these names say "test".
    # A name that ends in what is done with the results: nod-ai/shark-ai `Coverage comment` (py-cov-action, after
    # the tests), llama.cpp `ccache-buckets-save` (after `Test`; an action step, setup by default); not a name that
    # says it tests (`Run tests and upload`), nor one that begins with a build or an install (`Build and upload`,
    # `Pull image and save`: review147 z04; the rules below take them).
    StepRule(r"(?i)(?!" + TEST_WORD + r"|(?:build|install|set ?up|pull|compile|configure|make|create)\b)"
             r".*[\s_-](?:comments?|uploads?|save)$", "other"),  # (`Download results and upload`: other)
    # pytorch `Upload test artifacts`, `Save test results`, `Store Core dumps on GitHub`, `Collect backtraces
    # ...`; TE `Copy logs and reports from container`; JAX `Archive jax wheels`; aiter `Collect test logs`;
    # DeepSpeed `Open GitHub issue if nightly CI fails`; SGLang `Upload diffusion failure artifacts`.
    # (IREE's names are gerunds: `Uploading new config file`, `Checking out external TestSuite repository`,
    # `Installing external TestSuite Python requirements`; each verb's -ing form goes with it.)
    # FBGEMM's `Collect PyTorch Environment Info`: a look at the machine before the tests (not `Collect ROCm logs`,
    # `Collect GPU core dumps`, `Collect test results from host`, after them: other, next)
    # ROCm/iris `Report environment versions` (before its tests; not `Report test results`, after them)
    # (not `Report GPU health status`: a report, whatever of)
    StepRule(r"(?i)report(?:ing)? (?:the )?(?:env|environment|system|host|rocm|machine) (?:versions?|info(?:rmation)?"
             r"|details|config\w*)\b", "setup"),
    StepRule(r"(?i)collect(?:ing)? (?!.*\b(?:logs?|dumps?|core|results?|artifacts?|reports?|traces?)\b)"
             r"(?:\S+ )*?(?:env|environment|system|host|gpus?|rocm|hardware) info(?:rmation)?\b", "setup"),
    # Packing the logs (alibaba/rtp-llm `Compress unit tests logs`, after its tests on MI308: were test by the word);
    # not a tarball fetched (`Install TheRock tarball`)
    StepRule(r"(?i)" + THEN_TESTS + r"(?:compress(?:ing)?|zip(?:ping)?|tar(?:ring)?)\b", "other"),
    # ... but a cache copied in place is setup (ColossalAI `Copy testmon cache`, pytest-testmon's selection data)
    StepRule(r"(?i)" + THEN_TESTS + r"(?:copy(?:ing)?|prim(?:e|ing)|seed(?:ing)?) (?:\S+ ){0,3}caches?\b", "setup"),
    StepRule(r"(?i)(?:(?:upload(?:ing)?|archiv(?:e|ing)|stor(?:e|ing)|sav(?:e|ing)|publish(?:ing)?"
             r"|collect(?:ing)?"
             r"|gather(?:ing)?|pack(?:ing)?|report(?:ing)?|notify(?:ing)?|comment(?:ing)?)\b|summar"
             r"|write back|copy .*\b(?:logs?|reports?|results?|artifacts?)\b|(?:open|create|file) .*\bissue)",
             "other"),
    # Getting the results ready to upload: onnxruntime `Prepare Build Output for Upload`, pytorch/test-infra
    # linux_job_v2.yml `Prepare artifacts for upload` (both after the tests).
    StepRule(r"(?i).*\bfor upload\b", "other"),
    # `Post-<phase>` steps and what runs after teardown: TheRock `Post-job cleanup GPU processes on Linux`, xformers
    # `Post-build clean`, pytorch/test-infra `Clean workspace after tear down`.
    StepRule(r"(?i)(?:post-(?:job|build|run|test)\b|.*\bafter (?:tear ?down|teardown)\b)", "other"),
    # ... and a look at the machine after the tests (`GPU check after tests`, `Show disk usage after the tests`):
    # other, not the setup of the same look before them.
    StepRule(r"(?i).*\bafter (?:the |all )?(?:tests?|benchmarks?)\b", "other"),
    # Notifying a dashboard that the job started or ended, `if: always()`: TheRock's notify_quartz action steps
    # `Quartz - started - test ROCm component`, `Quartz - completed - test ROCm component`.
    StepRule(r"(?i)quartz - (?:started|completed)\b", "other"),
    # SGLang; TheRock `Capture job summary`; Megatron-LM `Display benchmark report`, `List test reports` (`if:
    # always()`, after the tests: as tests, a run whose benchmarks were skipped would count as one that ran them).
    StepRule(r"(?i)(?:generate|write|create|build|print|show|capture) .*\b(?:reports?|summary)\b", "other"),
    # ... but a listing of the machine (`Display GPU summary`, `Dump system summary`) is a look before the tests: setup
    # (the diagnostics rule below), as it was before these verbs were added here.
    StepRule(r"(?i)(?:display|list|cat|dump) (?!.*\b(?:env|environment|system|host|gpus?|rocm|rocm-smi|rocminfo"
             r"|devices?|hardware|runners?|versions?|info)\b).*\b(?:reports?|summary)\b", "other"),
    # pytorch `Print remaining test logs`; TheRock `Print test reproduction command` (`if: failure()`, after `Test`).
    # ... and the results (rocm-systems amdsmi `Show test results`, `Print test results`).
    # (GPTQModel `Check log`, `if: failure()`, after `Run tests`)
    StepRule(r"(?i)" + THEN_TESTS + r"(?:print|show|display|cat|dump|tail|check) .*\b(?:logs?|repro\w*|results?)\b", "other"),
    StepRule(r"(?i)test (?:suite )?reports?\b", "other"),  # transformers `Test suite reports artifacts: ...`
    # rocm-systems amdsmi's `if: always()` steps that `cat` each suite's log after the tests: `AMDSMI Test Results`,
    # `Unit Test Results`, `Example DRM Test Results`; and `Test Summary` (as tests, a job whose tests were skipped
    # after a failed build counted as one that ran them)
    # (not one that runs, checks or compares them: `Run tests and collect test results`, `Verify GPU test results` are
    # tests)
    StepRule(r"(?i)(?!.*\b(?:run\w*|execut\w*|launch\w*|start\w*|verif\w*|validat\w*|assert\w*|compar\w*|check\w*)\b)"
             r"(?:.*\s)?tests? (?:results?|summary|summaries|outcomes?)$", "other"),
    # Unnamed actions that upload or tear down: pytorch `Run ./.github/actions/upload-test-artifacts`,
    # SGLang `Run ./.github/actions/upload-cuda-coredumps`, `Run actions/upload-artifact@v4`.
    StepRule(r"(?i)Run \S*(?:upload|publish|teardown|cleanup|create-an-issue|comment|notify)\S*$", "other"),
    # An unnamed `run:` step is named `Run <its first line>`: a banner it echoes says nothing of what it does
    # (AMD-AGI/Primus-Turbo's first step `Run echo "🎉 Begin Primus-Turbo PyTorch Framework Unit Test."`: as a test,
    # it made a job whose tests were skipped after a failed build one that ran them); nor an install of a tool
    # the tests use (`Run pip install pytest`: setup, below)
    # (not one that writes: `echo "X=1" >> $GITHUB_ENV` sets what the next steps run with, setup below)
    FIRST_LINE_BANNER := StepRule(r"(?i)run (?:echo|printf)\b(?!.*(?:&&|\|\||;|>|\bgithub_(?:env|path|output)\b))",
                                  "other"),
    # TE `Check Test Failure Status`; SGLang `Check all dependent job statuses`, `Check if any job failed`;
    # pytorch/test-infra linux_job_v2.yml `Surface failing tests` (pmeier/pytest-results-action, `if: always()`).
    StepRule(r"(?i)(?:check|surface) .*\b(?:fail\w*|status\w*|results?|coverage)\b", "other"),
    # SGLang: sanity checks inside the started container (tests/test_timing.py pins them as other).
    StepRule(r"(?i)(?:verify|test) (?:rccl|nccl|rdma|nixl)\b", "other"),
    # Teardown: aiter/TE `Cleanup container`, aiter `Clean Up`, pytorch `Teardown ROCm`, `Stop monitoring
    # script`, triton `Clean up caches`.
    StepRule(r"(?i)(?:teardown|tear(?:ing)? down|clean ?up|cleaning(?: up)?|remov(?:e|ing)|delet(?:e|ing)"
             r"|stop(?:ping)?|kill(?:ing)?)\b", "other"),
    StepRule(r"(?i)(?:lint|format|pre-commit|clang-format|ruff|flake8|mypy|actionlint)\b", "other"),
    # ... and a linter's or formatter's action, unnamed (GitHub names it `Run owner/repo@ref`): AMD-AGI/Primus
    # `Run psf/black@stable`, `Run isort/isort-action@v1`; `pre-commit/action`, `astral-sh/ruff-action` (were setup,
    # as any other action). The word is one of the action's name, between separators.
    StepRule(r"(?i)run (?=[\w.-]+/[\w./-]*@\S*$)(?:[\w./-]*[/_.-])?(?:lint\w*|black|isort|ruff|flake8|pylint|mypy"
             r"|pre-commit|codespell|shellcheck|clang-format|yapf|autoflake|autopep8|typos|prettier|eslint)"
             r"(?![a-z0-9])", "other"),
    # A step that builds (installs, configures) and then tests: rocm-systems `Configure, Build, and Test` (ctest's
    # dashboard script), `Build and run tests`, `Build & Test`, `Install and run tests (py3.10)`. Test, before the
    # setup rules: as setup, its hour made a job with one more short test step a "short suite" to fold. The setup
    # in it is not measured, and the report says so (`COMBINED_TEST`).
    COMBINED_TEST,
    # -- setup, before the test rules (`Install Pytest`, `Set Test step time`, `Triton Test Selection Script`).
    # Checkout: SGLang/aiter `Checkout code`, pytorch `Checkout PyTorch`, TE `Checkout repository`, triton
    # `Checkout`, aiter `Sync submodules`, `Sync CK submodule`, `Clone sglang repo`; TheRock `Checking repository`,
    # `Checking out repository` (checkouts of a called workflow, whose `uses:` foldbot does not see), `Adjust git config`.
    StepRule(r"(?i)(?:checkout|check out|checking out|checking (?:the )?repo\w*|clon(?:e|ing)|fetch(?:ing)?"
             r"|(?:sync|update|init) (?:\S+ )*?submodules?"
             r"|.*\bgit config)\b", "setup"),
    # Installs, builds, pulls, logins, caches: DeepSpeed `Install pytorch`, `Install deepspeed`; pytorch
    # `Setup ROCm`, `configure aws credentials`, `Login to Amazon ECR`, `Pull docker image`, `Download build
    # artifacts`, `Set Test step time`; aiter `Docker login`, `Setup pip config`, `Setup-Triton`, `Update RCCL`,
    # `Install speedtest-cli and test network`, `Install Pytest`; JAX `Build JAX`; TE `Build Project`,
    # `Pull Docker Image`; triton `Install Triton`, `Cache build dependencies`, `CCache Stats`, `Update compiler
    # to clang`; optimum-benchmark `Restore files ownership`, `Build image`, `Set target devices`; SGLang
    # `Setup docker`, `Setup kernel caches`, `Install dependencies`, `Download artifacts`, `Login to Docker Hub`;
    # transformers `Reinstall transformers in edit mode ...`; TheRock `Configuring CI options`.
    # (Gerunds too, but not `updating`/`upgrading`: IREE's `Updating config file with latest XFAIL lists` runs after
    # the tests, on a failure.)
    # A check before the work is sent: AMD-AGI/GEAK `Preflight (SPUR reachable + dataset present)` (`sinfo`, `test -d`,
    # before its Slurm jobs are submitted); SemiAnalysisAI/InferenceX `Host amd-smi preflight` (not
    # `Upload preflight report`: the rules above take it)
    StepRule(r"(?i)(?!" + TEST_WORD + r")(?:\S+ ){0,3}pre-?flight\b", "setup"),
    # ROCm/rocm-examples `CMake configure`, `CMake build` (of the examples, on the GPU runner, before `Run tests`), not a
    # report of them (`CMake configure error summary`)
    StepRule(r"(?i)cmake (?:configure|build|install)\b(?!.*\b(?:summary|reports?|logs?|errors?|results?)\b)", "setup"),
    FIRST_LINE_INSTALL := StepRule(
        r"(?i)run (?:sudo(?: -\S+)* )?(?:\w+=\S* )*(?:python[\d.]* -m )?(?:pip[\d.]*|uv pip|conda|mamba|micromamba"
        r"|apt(?:-get)?|yum|dnf) (?:-\S+ )*install\b(?!.*(?:&&|\|\||;))", "setup"),
    # GPTQModel `Activate uv env`; ROCm/MIVisionX `Extract the bundle manifest` (not results or logs extracted)
    StepRule(r"(?i)" + THEN_TESTS + r"activat(?:e|ing)\b", "setup"),
    StepRule(r"(?i)" + THEN_TESTS + r"extract(?:ing)?\b(?!.*\b(?:results?|reports?|logs?|artifacts?|metrics|summary|summaries)\b)", "setup"),
    StepRule(r"(?i)(?:set ?up|setup|set|setting(?: up)?|(?:re-?|un)?install(?:ing)?|update|upgrade|configure|configuring"
             r"|config|prepar(?:e|ing)|enabl(?:e|ing)|build(?:ing)?|compil(?:e|ing)|warm(?:ing)? ?up|pull(?:ing)?"
             r"|download(?:ing)?|restor(?:e|ing)|cach(?:e|ing)|ccache|login|log(?:ging)? ?in|docker login"
             r"|authenticat(?:e|ing)|sign(?:ing)? in|free(?:ing)? disk|initiali[sz](?:e|ing)|patch(?:ing)?"
             r"|push(?:ing)? (?:the )?(?:docker )?images?)\b", "setup"),
    # Starting the container or helpers: SGLang `Start CI container`, `Start Special Container`, `Start
    # container from the miles image`; aiter `Run the container`; TE `Run Container`; pytorch `Start
    # monitoring script`.
    StepRule(r"(?i)(?:start|run|launch|create|boot|spin up) (?:the |a |ci |special |docker )?containers?\b", "setup"),
    # aiter `Start Radeon test container` (not `Launch tests in container`: what runs in it)
    StepRule(r"(?i)(?:start|launch|boot|spin up) (?:(?!(?:in|inside|within|into|on)\b)\S+ ){1,3}?containers?$", "setup"),
    StepRule(r"(?i)start (?:monitoring|services?|server)\b", "setup"),
    # Taking the machine, and what was made for it: ROCm/iris `Acquire GPUs` (a lock on the node's GPUs, waited
    # for; its `Release GPUs` after the tests is other), ROCm/Megatron-LM `Load image for docker run` (`docker
    # load` of the image built the step before), ROCm/FlyDSL `Use cached MLIR install tarball (skip LLVM build)`.
    # (GPTQModel `Find suitable GPU`: asks its GPU broker for a free one, waited for)
    StepRule(r"(?i)" + THEN_TESTS + r"(?:acquire|reserve|allocate|claim|lock|find(?: (?:a|an|the|suitable|free|idle|available))*) "
             r"(?:the |a |\S+ )?(?:gpus?|devices?|nodes?|runners?|locks?)\b",
             "setup"),
    StepRule(r"(?i)(?:docker )?load (?:the |a )?(?:docker |container |ci )?images?\b", "setup"),
    StepRule(r"(?i)use (?:the )?cached\b", "setup"),
    # Deciding what to run and where: pytorch `Calculate docker image`, `Parse ref`, `Get workflow job id`,
    # `Check for keep-going label and re-enabled test issues`; TE `Select Docker Image Tag`; triton `Compute
    # cache keys`; aiter `Triton Test Selection Script`; optimum-benchmark `Target devices`; SGLang `Determine
    # run mode`, `Detect file changes`, `Resolve newest miles ROCm 7.2 image`, `Compute partitions`.
    StepRule(r"(?i).*\b(?:test selection|select(?:ing)? tests|target determination)\b", "setup"),
    # ... and what the shards will run: aiter `List test shard files`, TheRock `Export test times for sharding`
    # (pytorch's export_test_times.py, read by its sharder), ROCm/vllm `Check models performance test script`.
    # (the name ends there: `Check that all test files ran`, `Split test list and run shard` are tests)
    StepRule(r"(?i)(?:list|export|split|load|check) .*\btests? (?:(?:shard )?(?:files|lists?)|shards?|times|scripts?"
             r"|matrix)(?: for \S+)?$", "setup"),
    StepRule(r"(?i)" + THEN_TESTS + r"plan(?:ning)?\b(?!.*\b(?:results?|reports?)\b)", "setup"),  # ROCm/MIVisionX `Plan the suites`
    StepRule(r"(?i)(?:determine|detect|decide|define|compute|calculate|resolve|select|choose|pick|parse|get"
             r"|read|target|check for)\b", "setup"),
    # transformers' `Identify models to test` (its Setup job on the AMD runner writes the model matrix); not what
    # looks at the results (`Identify failing tests`)
    StepRule(r"(?i)identify(?:ing)? (?!.*\b(?:fail\w*|flak\w*|broken|regress\w*)\b)", "setup"),
    # What the next steps run with, said in the name: TheRock `Extract JAX version and set to GITHUB_ENV`; and a
    # Python environment made, or a dependency's headers staged, before the tests: TheRock `System deps, venv
    # configure`, rocm-libraries `Stage header-only hipblas-common from this checkout` (cmake configure + install).
    # (never a name the test rules below would take: `Run pytest in venv`, `Stage B benchmarks`)
    FIRST_LINE_WORDS := StepRule(
        r"(?i)(?!" + TEST_WORD + r")(?:.*\bgithub_(?:env|path|output)\b|.*\b(?:venv|virtualenv|deps)\b"
        r"|stag(?:e|ing) (?!\d)(?!.*\b(?:results?|reports?|logs?|artifacts?|outputs?)\b))", "setup"),
    # What the tests read, put in place: tinygrad `Symlink models and datasets` (weights kept on the box), kernelbot
    # `Create input files` (the payload its `Run script` reads).
    # (not a name that says it tests too: `Symlink test data and run tests`)
    StepRule(r"(?i)(?!" + TEST_WORD + r")(?:(?:(?:create|make|add) (?:the )?)?sym(?:bolic )?links?\b"
             r"|symlink(?:s|ing)?\b|link (?:the )?(?:models?|weights|datasets?|data|caches?)\b"
             r"|(?:create|write|generate) (?:the )?(?:inputs?|payloads?)(?: files?)?$)", "setup"),
    # aiter `Generate Dockerfile`; SGLang; onnxruntime `Generate Build Files (CMake) (x64 / Release)`.
    StepRule(r"(?i)generate .*\b(?:dockerfile|matrix|build files|cmake)\b", "setup"),
    # Printing the machine before the tests: JAX `Print system info`, DeepSpeed `Python environment` and
    # `environment`, TE `Host Diagnostics & Environment Setup`, aiter `Show Dockerfile`, triton `Inspect cache
    # directories`, SGLang `Diagnose HF cache and system resources`, `Check Host RDMA Environment`; pytorch/test-infra
    # linux_job_v2.yml `Check if in a container runner`.
    StepRule(r"(?i)(?:print|show|display|inspect|check|verify(?!.*\b(?:tests?|results?|pass\w*|fail\w*)\b)|log"
             r"|diagnose|dump|list|query) .*\b(?:env|environments?"
             r"|system|host|gpus?|rocm|rocm-smi|rocminfo|amd-smi|nvidia-smi|devices?|container state|dockerfile|info"
             r"|versions?"
             r"|cache|hardware|resources|runners?|disk|shm|director(?:y|ies))\b", "setup"),
    StepRule(r"(?i).*\b(?:environments?|diagnostics|resources? snapshot)\b", "setup"),  # (Liger `List Python Environments`)
    StepRule(r"(?i)export .*\b(?:env|environment|vars?|variables?)\b", "setup"),  # SGLang `Export rdma_devices to job env`
    # pytorch _rocm-test.yml: `Preserve github env variables for use in docker` (the env file `Test`'s `docker run`
    # reads), `Runner check GPU count (distributed jobs)` (`rocminfo | grep -c gfx`), both before `Test`
    StepRule(r"(?i)preserv(?:e|ing) .*\b(?:env|environment|vars?|variables?)\b", "setup"),
    StepRule(r"(?i)(?:runner |node |host )?check\b.*\bgpus? count\b", "setup"),
    # transformers `ROCM-SMI`, `ROCM-INFO`; ROCm/jax `ROCm Info`; pytorch's Kubernetes lanes `Job pod rocminfo`, `Job
    # pod amd-smi`, `Job pod ROCm version`, `Job pod system info`, `Job pod GPU check`.
    StepRule(r"(?i)(?:run |job pod )?(?:rocm-smi|rocminfo|amd-smi|nvidia-smi|rocm[- ]info|rocm version"
             r"|system info(?:rmation)?|gpu check)\b", "setup"),  # (gpu-mode/kernelbot `System Information`)
    # -- test: a word of the name says test, benchmark, eval, accuracy or suite (a word: at the start or
    # after a space, `(` or `+`, so `Run ./.github/actions/run-tests`, an unnamed action, is not a test).
    # pytorch/JAX `Test`, `Run tests`; aiter `Tests`, `Triton Tests`, `Run correctness tests`, `Run
    # benchmarks`, `Evaluate Accuracy`; DeepSpeed `Unit tests`; triton `Run lit tests`, `Run C++ unittests`;
    # TE `Run sGPU tests`; optimum-benchmark `Run tests` (an action step); SGLang `Run test`, `Run diffusion
    # server tests (1-GPU)`, `Run test_disaggregation`, `Accuracy Test ...`, `Performance Test ...`,
    # `Nightly Unit Test ...`, `Benchmark offline throughput`, `Run miles CI suite ...`; ROCm/flash-attention
    # `AMD Bench`, `AMD Bench with Autotune` (`bench`, as benchmark); rocm-libraries `Execute direct and generic
    # public C/C++ GEMM regressions` (`regression`, as regression tests).
    StepRule(r"(?i)(?:python|pip|system|build|runtime|os) (?:dependencies|deps|requirements)$", "setup"),  # MIVisionX
    StepRule(r"(?i)" + TEST_WORD, "test"),
    # ... and a CamelCase name ending in the word (microsoft/mscclpp `MpUnitTests`, the mpirun tests beside its
    # `UnitTests`; `PyTests`): case-sensitive, so `latest` or `contest` is none
    StepRule(r"[A-Z]\w*[a-z](?:Unit)?Tests?\b", "test"),
    # pytorch/test-infra linux_job_v2.yml runs its caller's `script:` (pytorch/ao's ROCm regression tests, two
    # hours of pytest) in `Run script in container` or `Run script outside container`.
    StepRule(r"(?i)run (?:the )?script (?:in|inside|outside(?: of)?) (?:the |a )?container$", "test"),
    StepRule(r"(?i)run (?:the |new |all )?examples?\b", "test"),
    StepRule(r"(?i)(?:.*\s)?perf(?:ormance)? checks?\b", "test"),  # ROCm/rpp `Performance check - HIP` (its benchmark)  # TE `Run Examples`; ROCm/iris `Run new examples ...`
)

#: The default rules whose setup steps are other after the job's last test step (`RepoConfig.step_category`): a
#: look, a clean-up, a record of the machine after the tests is what runs after them (aiter's `Clean up Rocm
#: processes`, `if: always()` after its tests; ROCm/rocm-examples' last step `Clean the workspace`; MIVisionX's
#: `Record the environment` into its results). Not the steps GitHub lists after a job's own (`Post ...`, `Stop
#: containers`, `Complete job`), nor a repository's own rules: they say what a step is wherever it runs.
SETUP_BEFORE_TESTS = frozenset(id(rule) for rule in DEFAULT_STEP_RULES if rule.category == "setup"
                               and rule not in (RUNNER_STEPS, ACTION_PRE_POST, STOP_AND_REMOVE))

#: The rules that read an unnamed step by the first line of its script, which GitHub names it by, by that line's
#: kind: where it does not speak for the script (`StepDef.unspoken`: `echo "Running unit tests"`, then `pytest`),
#: they pass it by: a banner's rule; an install's, and a word such as `deps` or `venv` in it (`--no-deps`); of shell
#: set-up (`set -ex`, `cd build`), that word too where its commands run tests (`source venv/bin/activate`, then
#: `pytest`; then a build, it is setup by the word, and `if [ ... ]; then echo X >> $GITHUB_ENV; fi` too); another
#: rule that takes its words still does (`cd tests`), and where none does, what its commands say decides, not "other".
#: A first line that looks (`ls -la /dev/dri`, of a script that only looks: "look") is read by every rule, as a name.
FIRST_LINE_RULES = {"print": (FIRST_LINE_BANNER,), "install": (FIRST_LINE_INSTALL, FIRST_LINE_WORDS),
                    "shell": (FIRST_LINE_WORDS,), "look": ()}

WORKFLOWS_DIR = ".github/workflows"
DEFAULT_LANES = (f"{WORKFLOWS_DIR}/pr-test-amd.yml", f"{WORKFLOWS_DIR}/pr-test-amd-rocm*.yml")
DEFAULT_CI_PATHS = ("scripts/ci/**", CONFIG_PATH)


@dataclass(frozen=True)
class RepoConfig:
    lanes: tuple[str, ...] = DEFAULT_LANES
    exclude_lanes: tuple[str, ...] = ()
    # A label naming an Instinct part (mi210, mi250, mi-250, mi300x, mi325, mi35x, mi355, mi2xx), a gfx target
    # (gfx90a, gfx942, gfx950, gfx1100), ROCm, `amd` or `amdgpu` as a word (not `amd64`: NVIDIA's `linux-amd64-gpu-*`,
    # RAPIDS' `amd64`; nor `amd` followed by `cpu`, `epyc` or an EPYC code name (`amd-genoa`, `amd-milan`):
    # onnxruntime's CPU build pool `1ES.Pool=onnxruntime-github-Ubuntu2204-AMD-CPU`) or aiter's runners (`aiter-1gpu-runner` is an MI325).
    # `rocm` after `scale-` is not: the ROCm organisation's elastic CPU build pools (`azure-linux-scale-rocm`,
    # `aws-linux-scale-rocm-prod`, `azure-windows-scale-rocm`: build-only VMs, no GPU; rocm-libraries' MIOpen CI).
    # Nor `amd` after an EC2 size: pytorch's AMD EPYC CPU pools `linux.8xlarge.amd`, `linux.24xlarge.amd` (m7a,
    # m6a; its inductor x86-zen CPU benchmarks). Also a Radeon named by its architecture or card, as IREE's
    # runners are (`rdna3`, `radeon`, `navi31`; `iree-r9700`: Radeon AI PRO R9700, `iree-w7900`: Radeon PRO
    # W7900, `iree-7900xtx-1`, pytorch's `linux.rocm.gpu.rx7900.1`): an `rx`, `w` or `r` before a 6000-9000
    # card number, or a bare card number followed by `xt`/`xtx` (not NVIDIA's `rtx4090`, `a6000`); and AMD's APUs
    # with a Radeon GPU named by their code name (transformers' `strix-halo`: a Ryzen AI Max, gfx1151). Searched,
    # case-insensitive. (A card number alone is not: aiter's `[self-hosted, "9700"]` R9700 runner.)
    amd_runner_pattern: str = (r"^(?!.*\bbuild-only-).*?(?<![a-z0-9])(?:mi-?\d[\dx]{2}|gfx\d|(?<!scale-)rocm"
                               r"|(?<!xlarge\.)(?<!xl\.)amd(?:gpu)?(?![a-z0-9]|[-_. ]?(?:cpu|epyc|genoa|milan|rome|turin|bergamo|siena|npu|xdna|fpga"
                               r"|versal|ryzen[-_ ]?ai))"
                               r"|aiter(?![a-z0-9])"
                               r"|rdna\d|radeon|navi\d\d|(?:rx-?|w|r)[6-9]\d00|rx-?[6-9]\d\d0(?:xtx?|gre)?(?![0-9])|[6-9]\d00xtx?"
                               r"|strix[-_ ]?(?:halo|point))")
    step_rules: tuple[StepRule, ...] = DEFAULT_STEP_RULES
    fold_max_test_minutes: float = 15.0
    fold_min_setup_share: float = 0.5
    reshard_safety: float = 0.6
    min_samples: int = 3
    history_runs: int = 10
    comment_on: str = "ci-prs"
    ci_paths: tuple[str, ...] = DEFAULT_CI_PATHS
    dispatch_permission: str = "write"
    approve_permission: str = "maintain"
    dispatch_cooldown_minutes: int = 30
    ci_permissions_file: str | None = ".github/CI_PERMISSIONS.json"
    # The App reads shard logs for per-file test times: of matrices it considers resharding only,
    # at most `logs_max_jobs` downloads per event (cached logs are free), each at most `logs_max_mb`.
    logs_fetch: bool = True
    logs_max_jobs: int = 100
    logs_max_mb: float = 32.0
    _categories: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # memo of classify
    _action_categories: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # the same, action steps
    _script_categories: dict[tuple[str, str, str], str] = field(default_factory=dict, compare=False,
                                                                repr=False)  # scripts: (kind, said, name)
    _amd: dict[tuple[str, ...], bool] = field(default_factory=dict, compare=False, repr=False)  # memo of is_amd_runner
    _rules: dict[str, StepRule | None] = field(default_factory=dict, compare=False, repr=False)  # memo of rule_for

    def is_lane(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) for p in self.lanes) and not any(
            fnmatch.fnmatchcase(path, p) for p in self.exclude_lanes
        )

    def classify(self, step_name: str, action: bool = False, script: str = "", said: str = "") -> str:
        """The step's category: the first rule that matches its name; else `setup` for an
        action step (`uses:`, or a name GitHub gives an unnamed one: `Run owner/repo@ref`);
        else `other`. `script`: of an unnamed `run:` step whose first line, which GitHub names
        it by, does not speak for its script, that line's kind (`StepDef.unspoken`): the rules
        that read it so pass it by (`FIRST_LINE_RULES`), and what its commands say (`said`:
        `StepDef.said`) decides where no other rule takes its name; "named" for a named one whose
        commands say what it does, read by every rule first."""
        if script:
            key = (script, said, step_name)
            category = self._script_categories.get(key)
            if category is None:
                # (shell set-up's words pass only for tests: `source venv/bin/activate`, then a build, is setup by them;
                # a step's own name, "named", is read by every rule)
                passed = () if script == "named" or (script == "shell" and said != "test") else FIRST_LINE_RULES[script]
                if passed:
                    rule = _first(tuple(rule for rule in self.step_rules if all(rule is not by for by in passed)),
                                  step_name)
                else:  # (every rule: the name's own first, read once for `rule_for` and this)
                    rule = self.rule_for(step_name)
                category = self._script_categories[key] = _category(rule, step_name, action, said)
            return category
        memo = self._action_categories if action else self._categories
        category = memo.get(step_name)
        if category is None:
            category = memo[step_name] = _category(self.rule_for(step_name), step_name, action)
        return category

    def rule_for(self, step_name: str) -> StepRule | None:
        """The rule that classifies a step's name: the first that matches it."""
        if step_name not in self._rules:
            self._rules[step_name] = _first(self.step_rules, step_name)
        return self._rules[step_name]

    def step_category(self, step: Any) -> str:
        """The category of a step as written (a `bot.workflow.StepDef`), in its job (`job_categories`)."""
        steps = step.siblings
        if step.index < len(steps) and steps[step.index] is step:
            return self.job_categories(steps)[step.index]
        return self._category_alone(step)  # (a step read alone: no place to read it by)

    def job_categories(self, steps: Any) -> tuple[str, ...]:
        """The categories of a job's steps, each in its place: a script that only looks, no rule taking its name
        (`looks_at_the_machine`), is setup before the job's first test step, as it is measured
        (`bot.timing.JobMatcher.script_steps`), so that a fold moves it only where the host has it too (review151
        c03: as other, a suite's 20-minute download before its tests was counted as setup saved, and moved into the
        host); a step a default setup rule takes is other after the job's last test step (`setup_before_tests`).
        The first and last test steps are of the steps alone (`test_span`). Kept with the job's steps
        (`bot.workflow.JobSteps`: a config kept by id cost 2.4 ms of a 45 ms analysis of SGLang's lanes)."""
        return self._reading(steps)[3]

    def test_span(self, steps: Any) -> tuple[int, int]:
        """The indexes of the first and last test steps of a job's steps (a step is a test alone, not by its place):
        `len(steps)` and -1 where none is."""
        _, first, last, _ = self._reading(steps)
        return first, last

    def _reading(self, steps: Any) -> tuple[Any, int, int, tuple[str, ...]]:
        """This config's reading of a job's steps (`job_categories`): itself, the first and last test steps, the
        categories; kept with the steps where they keep one (`JobSteps`)."""
        hit = getattr(steps, "categories", None)
        if hit is None or hit[0] is not self:
            alone = [self._category_alone(step) for step in steps]
            tests = [index for index, category in enumerate(alone) if category == "test"]
            first, last = (tests[0], tests[-1]) if tests else (len(steps), -1)
            categories = tuple(
                self.classify(step.name, False, step.unspoken, "setup")
                if index < first < len(steps) and self.looks_at_the_machine(step)
                else "other" if category == "setup" and index > last >= 0 and self.setup_before_tests(step.name)
                else category
                for index, (step, category) in enumerate(zip(steps, alone)))
            hit = (self, first, last, categories)
            if hasattr(steps, "categories"):  # (`JobSteps`; a plain list or tuple keeps nothing)
                steps.categories = hit
        return hit  # type: ignore[no-any-return]

    def setup_before_tests(self, step_name: str) -> bool:
        """Whether a step's name is setup by a default rule that says so of what runs before the tests alone
        (`SETUP_BEFORE_TESTS`): after the job's last test step, the step is other."""
        return id(self.rule_for(step_name)) in SETUP_BEFORE_TESTS

    def _category_alone(self, step: Any) -> str:
        """The category of a step by itself: its name, its `uses:`, its commands."""
        if step.uses is not None:
            return self.action_category(step.name, step.uses if step.explicit_name is not None else None)
        if step.explicit_name is not None and self.rule_for(step.name) is not None:  # (its commands not read)
            return self.classify(step.name)
        return self.classify(step.name, False, step.unspoken, step.said)

    def looks_at_the_machine(self, step: Any) -> bool:
        """Whether a `run:` step only looks (`StepDef.looks_only`) and no rule takes its name: what its place in
        its job tells (helion's `Run ROCm command`, `rocminfo`, before the tests; `ls results/` after them)."""
        return (step.uses is None and (step.explicit_name is None or self.rule_for(step.name) is None)
                and bool(step.unspoken) and not step.said and step.looks_only)

    def action_category(self, step_name: str, uses: str | None = None) -> str:
        """The category of an action step: the first rule that takes its name; where none does and its `uses:` is
        known (`uses`, of a named step), the category of the name GitHub gives it unnamed, `Run <uses>`
        (ROCm/rocprofiler-systems' `CTest Artifacts`, an `actions/upload-artifact@v4`, is other as `Run
        actions/upload-artifact@v4` is); else setup."""
        if uses is not None and self.rule_for(step_name) is None:
            unnamed = self.classify(f"Run {uses}", True)  # (not a test by its owner's name: `benchmark-action/...`)
            return "setup" if unnamed == "test" else unnamed
        return self.classify(step_name, True)

    def is_amd_runner(self, labels: tuple[str, ...] | list[str] | str) -> bool:
        key = (labels,) if isinstance(labels, str) else tuple(labels)
        amd = self._amd.get(key)
        if amd is None:
            pattern = _compiled(self.amd_runner_pattern, re.I)
            amd = self._amd[key] = any(pattern.search(label) for label in key)
        return amd


#: The name GitHub shows for an unnamed action step: `Run actions/checkout@v4`,
#: `Run owner/repo/path@ref`, `Run docker://image:tag`.
_ACTION_STEP_NAME = re.compile(r"Run (?:[\w.-]+/[\w.-]+(?:/[^\s@]+)?@\S+|docker://\S+)$")


def _first(rules: tuple[StepRule, ...], step_name: str) -> StepRule | None:
    """The first of `rules` that takes the name."""
    bare = bare_name(step_name)
    return next((rule for rule in rules if rule.matches(step_name, bare)), None)


def _category(rule: StepRule | None, step_name: str, action: bool, said: str = "") -> str:
    """The category of the rule that takes a step's name; where none does, what its commands say; else `setup`
    for an action, `other` for any other step."""
    if rule is not None:
        return rule.category
    if said:
        return said
    if action or _ACTION_STEP_NAME.match(step_name):
        return "setup"
    return "other"


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


#: How a refused value is shown: cut short, nested values to two levels. (`repr` reads every
#: alias out: nine aliases of nine, seven deep, were 1.6 GB of text; a 70 KB value, a reply GitHub refused.)
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother = 2, 60, 60
_SHOWN.maxlist = _SHOWN.maxtuple = _SHOWN.maxdict = _SHOWN.maxset = 4


def _shown(value: Any) -> str:
    return _SHOWN.repr(value)


def _whole(value: Any, key: str, low: int, high: int) -> int:
    """A whole number in [low, high]; `5.0` counts as 5, as JSON Schema's `integer` does."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (number and low <= value <= high and value == int(value)):
        raise ConfigError(f"`{key}` must be a whole number from {low} to {high}, not {_shown(value)}")
    return int(value)


def _number(value: Any, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"`{key}` must be a number from {low:g} to {high:g}, not {_shown(value)}")
    return float(value)


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"`{key}` must be true or false, not {_shown(value)}")
    return value


def _choice(value: Any, key: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(f"`{key}` must be {_or(choices)}, not {_shown(value)}")
    return value


def _str_list(value: Any, key: str) -> tuple[str, ...]:
    """A list of strings; a single string is a list of one."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of strings")
    return tuple(value)


def _workflow_globs(value: Any, key: str) -> tuple[str, ...]:
    """Workflow files, as paths (globs) from the repository's root; a bare file name, as
    `workflow_run: workflows:` and a workflow's page name them (`pr-test-amd.yml`), is a file of
    `.github/workflows/`: as a path it would match no file."""
    return tuple(glob if "/" in glob else f"{WORKFLOWS_DIR}/{glob}" for glob in _str_list(value, key))


def _regex(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"`{key}` must be a string")
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigError(f"`{key}` is not a valid regular expression: {exc}") from None
    return value


def _path_or_null(value: Any, key: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"`{key}` must be a path or null")
    return value


def _step_rules(value: Any) -> tuple[StepRule, ...]:
    """The file's own rules; null is none. Every bad rule is a problem of its own."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError("`step_rules` must be a list of {pattern, category}")
    rules, problems = [], []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"pattern", "category"}:
            problems.append(f"step_rules[{i}] must have exactly `pattern` and `category`")
        elif item["category"] not in CATEGORIES:
            problems.append(f"step_rules[{i}].category must be one of {', '.join(CATEGORIES)}")
        else:
            try:
                rules.append(StepRule(_regex(item["pattern"], f"step_rules[{i}].pattern"), item["category"]))
            except ConfigError as exc:
                problems.extend(exc.problems)
    if problems:
        raise ConfigError(*problems)
    return tuple(rules)


def _or(words: Iterable[str]) -> str:
    """`a, b or c`."""
    *rest, last = words
    return f"{', '.join(rest)} or {last}" if rest else last


#: A setting's parser: the value as written in, `RepoConfig` keyword arguments out, or a ConfigError.
Parser = Callable[[Any], dict[str, Any]]


def _settings(raw: dict[Any, Any], parsers: dict[str, Parser], prefix: str = "") -> dict[str, Any]:
    """The keyword arguments of a mapping of settings (the file, or one of its nested mappings
    when `prefix` is `fold.` and the like). Every problem is kept, not only the first; an
    unknown key names the known one it is closest to."""
    problems = [_unknown(prefix, str(key), parsers) for key in raw if key not in parsers]
    kwargs: dict[str, Any] = {}
    for key, parse in parsers.items():
        if key in raw:
            try:
                kwargs.update(parse(raw[key]))
            except ConfigError as exc:
                problems.extend(exc.problems)
    if problems:
        raise ConfigError(*problems)
    return kwargs


def _unknown(prefix: str, key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f"did you mean `{prefix}{close[0]}`?" if close else f"use {_or(prefix + k for k in known)}"
    return f"`{prefix}{key}` is not a setting; {hint}"


def _nested(key: str, parsers: dict[str, Parser]) -> Parser:
    """The parser of a nested mapping of settings (`fold`, `reshard`, `permissions`, `logs`); null is empty."""

    def parse(value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ConfigError(f"`{key}` must be a mapping")
        return _settings(value, parsers, f"{key}.")

    return parse


ROLES = ("none", "read", "triage", "write", "maintain", "admin")
COMMENT_ON = ("ci-prs", "all-prs", "none")

#: Every setting of `.github/foldbot.yml` (the README's "Repository configuration" shows them;
#: `bot/foldbot.schema.json` says the same as a JSON Schema, and tests/test_config_schema.py holds them to agreeing).
_KNOWN_KEYS: dict[str, Parser] = {
    "lanes": lambda v: {"lanes": _workflow_globs(v, "lanes")},
    "exclude_lanes": lambda v: {"exclude_lanes": _workflow_globs(v, "exclude_lanes")},
    "amd_runner_pattern": lambda v: {"amd_runner_pattern": _regex(v, "amd_runner_pattern")},
    "step_rules": lambda v: {"step_rules": _step_rules(v)},
    "replace_default_step_rules": lambda v: {"replace_default_step_rules": _bool(v, "replace_default_step_rules")},
    "fold": _nested("fold", {
        "max_test_minutes": lambda v: {"fold_max_test_minutes": _number(v, "fold.max_test_minutes", 0, 10_000)},
        "min_setup_share": lambda v: {"fold_min_setup_share": _number(v, "fold.min_setup_share", 0, 1)},
    }),
    "reshard": _nested("reshard", {"safety": lambda v: {"reshard_safety": _number(v, "reshard.safety", 0.05, 1)}}),
    "min_samples": lambda v: {"min_samples": _whole(v, "min_samples", 1, 100)},
    "history_runs": lambda v: {"history_runs": _whole(v, "history_runs", 1, 100)},
    "comment_on": lambda v: {"comment_on": _choice(v, "comment_on", COMMENT_ON)},
    "ci_paths": lambda v: {"ci_paths": _str_list(v, "ci_paths")},
    "permissions": _nested("permissions", {
        "dispatch": lambda v: {"dispatch_permission": _choice(v, "permissions.dispatch", ROLES[1:])},
        "approve": lambda v: {"approve_permission": _choice(v, "permissions.approve", ROLES[1:])},
    }),
    "dispatch_cooldown_minutes":
        lambda v: {"dispatch_cooldown_minutes": _whole(v, "dispatch_cooldown_minutes", 0, 1440)},
    "ci_permissions_file": lambda v: {"ci_permissions_file": _path_or_null(v, "ci_permissions_file")},
    "logs": _nested("logs", {
        "fetch": lambda v: {"logs_fetch": _bool(v, "logs.fetch")},
        "max_jobs": lambda v: {"logs_max_jobs": _whole(v, "logs.max_jobs", 0, 1000)},
        "max_mb": lambda v: {"logs_max_mb": _number(v, "logs.max_mb", 1, 1024)},
    }),
}


def parse_config(text: str | None) -> RepoConfig:
    """Parse `.github/foldbot.yml`; None or empty text gives the defaults. A ConfigError
    names every problem of the file, so one fix-and-push fixes them all."""
    if text is None or not text.strip():
        return RepoConfig()
    try:
        repeated = _repeated_keys(yaml.compose(text, Loader=yaml.SafeLoader))
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"not valid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}") from None
    if repeated:  # YAML keeps the last, and the settings before it would be dropped without a word
        raise ConfigError(*repeated)
    if raw is None:
        return RepoConfig()
    if not isinstance(raw, dict):
        raise ConfigError("the file must be a mapping of settings")
    kwargs = _settings(raw, _KNOWN_KEYS)
    rules = kwargs.pop("step_rules", ())
    if kwargs.pop("replace_default_step_rules", False):
        kwargs["step_rules"] = rules
    elif rules:
        kwargs["step_rules"] = rules + DEFAULT_STEP_RULES
    return RepoConfig(**kwargs)


def _repeated_keys(root: yaml.Node | None) -> list[str]:
    """Each key a mapping of the file writes twice, by its path, with its lines (GitHub's own
    workflow parser refuses such a file too)."""
    problems: list[tuple[int, str]] = []
    stack: list[tuple[yaml.Node | None, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
                if name in first and name != "<<":
                    line = key.start_mark.line + 1
                    problems.append((line, f"`{path}{name}` is written twice (lines {first[name]} and {line}): "
                                           "write its settings once"))
                first.setdefault(name, key.start_mark.line + 1)
                stack.append((value, f"{path}{name}."))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path[:-1]}[{i}].") for i, item in enumerate(node.value))
    return [problem for _, problem in sorted(problems)]


def effective_settings(config: RepoConfig) -> dict[str, Any]:
    """The settings in effect, in `.github/foldbot.yml`'s own shape (parsed again, they give the
    same config). Of the step rules, the file's own only: the defaults are foldbot's."""
    replaced = config.step_rules[-len(DEFAULT_STEP_RULES):] != DEFAULT_STEP_RULES
    own = config.step_rules if replaced else config.step_rules[:-len(DEFAULT_STEP_RULES)]
    return {
        "lanes": list(config.lanes),
        "exclude_lanes": list(config.exclude_lanes),
        "amd_runner_pattern": config.amd_runner_pattern,
        "step_rules": [{"pattern": r.pattern, "category": r.category} for r in own],
        "replace_default_step_rules": replaced,
        "fold": {"max_test_minutes": config.fold_max_test_minutes, "min_setup_share": config.fold_min_setup_share},
        "reshard": {"safety": config.reshard_safety},
        "min_samples": config.min_samples,
        "history_runs": config.history_runs,
        "comment_on": config.comment_on,
        "ci_paths": list(config.ci_paths),
        "permissions": {"dispatch": config.dispatch_permission, "approve": config.approve_permission},
        "dispatch_cooldown_minutes": config.dispatch_cooldown_minutes,
        "ci_permissions_file": config.ci_permissions_file,
        "logs": {"fetch": config.logs_fetch, "max_jobs": config.logs_max_jobs, "max_mb": config.logs_max_mb},
    }


def lane_name(path: str) -> str:
    """`pr-test-amd-rocm720.yml` → `rocm720`; `pr-test-amd.yml` → `amd`; others: the file stem."""
    stem = path.rsplit("/", 1)[-1]
    stem = re.sub(r"\.ya?ml$", "", stem)
    match = re.fullmatch(r"(?:.*-)?amd(?:-(.+))?", stem)
    if match:
        return match.group(1) or "amd"
    return stem
