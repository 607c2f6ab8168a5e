"""A broken `.github/foldbot.yml` in the App: the dashboard issue names every problem, a
misspelt key with the one it is closest to, as `foldbot config check` does."""

from __future__ import annotations

from bot.publish import DASHBOARD_LABEL
from tests.fakegithub import FakeGitHub
from tests.harness import Bot, current_world


async def test_the_dashboard_names_every_problem_and_the_key_meant(fake_github: FakeGitHub, bot: Bot) -> None:
    world, _ = current_world(fake_github, config="fold: {max_test_mins: 10}\nmin_samples: 0\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    [issue] = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    # the names as code, not as escaped backticks
    assert ("could not analyse sgl-project/sglang: .github/foldbot.yml: `fold.max_test_mins` is not a setting; "
            "did you mean `fold.max_test_minutes`?; `min_samples` must be a whole number from 1 to 100, not 0") in \
        issue.body

