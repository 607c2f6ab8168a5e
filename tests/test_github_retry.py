"""How long a call waits after GitHub refused it for its rate limits, as GitHub's REST best
practices say: Retry-After when given; else the reset when no call is left; else at least a
minute (a secondary limit), never the primary window's reset."""

from __future__ import annotations

import http
import time

import aiohttp
import pytest
from gidgethub import BadRequest

from bot.github import RetryingGitHubAPI

SECONDARY = ("You have exceeded a secondary rate limit and have been temporarily blocked from content creation. "
             "Please retry your request again later.")
PRIMARY = "API rate limit exceeded for installation ID 1."


async def waits_for(message: str, headers: dict[str, str], max_wait: float = 60.0) -> list[float] | None:
    """The waits before the retry (None: not retried)."""
    async with aiohttp.ClientSession() as session:
        api = RetryingGitHubAPI(session, "foldbot-test", max_wait=max_wait)
        waits: list[float] = []

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        api.sleep = sleep  # type: ignore[method-assign]
        retried = await api.handle_rate_limit_error(method="POST", url="/repos/o/r/issues/1/comments",
                                                    exception=BadRequest(http.HTTPStatus.FORBIDDEN, message,
                                                                         headers=headers), attempt=1)
        return waits if retried else None


@pytest.mark.parametrize("reset_in", [2, 2400])
async def test_a_secondary_limit_without_retry_after_waits_a_minute(reset_in: int) -> None:
    """Calls are left; the primary window's reset, soon or far, says nothing of this limit."""
    now = int(time.time())
    assert await waits_for(SECONDARY, {"x-ratelimit-remaining": "4990", "x-ratelimit-reset": str(now + reset_in)}) \
        == [60.0]


async def test_retry_after_is_waited_as_given() -> None:
    assert await waits_for(SECONDARY, {"retry-after": "7", "x-ratelimit-remaining": "4990"}) == [7.0]


async def test_an_exhausted_primary_limit_waits_for_its_reset_or_gives_up() -> None:
    now = time.time()
    [wait] = await waits_for(PRIMARY, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 30)}) or [0]
    assert 28 <= wait <= 31
    assert await waits_for(PRIMARY, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 2400)}) is None


async def test_a_refusal_carries_the_grant_of_the_token_that_met_it(fake_github, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """review85 f02: an approval's tree refused (403) to a token without `workflows`; the owner grants it
    and another delivery mints a token with it before the refusal is read: it was read against that
    newer token's grant, and the reply named Contents: write. The error carries its own token's."""
    from bot.github import GitHub, GitHubError
    from tests.harness import app_pool

    repo = fake_github.add_repo("o", "r")
    repo.put_files("main", {"README.md": "x\n"})
    fake_github.add_installation(7, [repo])
    fake_github.installations[7].permissions.pop("workflows")
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        gh = GitHub(pool, pool._api(7), 7)
        old = await pool.credentials.token(gh.api, 7)

        async def refused(token: str) -> None:
            assert token == old
            fake_github.installations[7].permissions["workflows"] = "write"  # granted meanwhile ...
            pool.credentials.forget(7)
            await pool.credentials.token(gh.api, 7)  # ... and a token minted with it, by another delivery
            raise BadRequest(http.HTTPStatus.FORBIDDEN, "Resource not accessible by integration")

        with pytest.raises(GitHubError) as caught:
            await gh._authorised("POST", "/repos/o/r/git/trees", refused)
        assert caught.value.granted is not None and "workflows" not in caught.value.granted
        assert caught.value.granted.get("contents") == "write"
