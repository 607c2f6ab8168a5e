"""The App's own events, `installation` and `installation_repositories`: GitHub sends them
to every App, unasked.

When an installation begins (created), comes back (unsuspended) or gains permissions
(new permissions accepted), and when it takes in repositories (added), the latest
completed run of each lane there that no dashboard names is journaled and reported
now, as reconciling would at its next round (`bot.reconcile`, the same delivery ids, so
a run is reported once): a repository gets its dashboard when foldbot is installed, not
at its next lane run. A repository with no lane file whose workflows (those whose name
says AMD) run jobs on AMD runners gets a dashboard that names them and the config that
makes them lanes: installed, foldbot never says nothing where it has something to measure. When an installation ends (deleted, suspended) or lets
repositories go (removed), one line says so; its deliveries still queued end after one
try each (`bot.github.unreachable`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection

from gidgethub import routing, sansio

from bot.api import RepoAPI
from bot.config import RepoConfig
from bot.context import Context
from bot.github import GitHub
from bot.reconcile import missed_in_installation
from bot.repo import amd_workflows
from .workflow_run import unanalysed, unconfigured

router = routing.Router()


def _runs(count: int) -> str:
    return f"{count} lane run" + ("" if count == 1 else "s")


def _who(data: dict[str, Any]) -> str:
    installation = data.get("installation") or {}
    login = (installation.get("account") or {}).get("login")
    return f"installation {installation.get('id')}" + (f" ({login})" if login else "")


@router.register("installation", action="created")
@router.register("installation", action="unsuspend")
@router.register("installation", action="new_permissions_accepted")
async def on_begun(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    await catch_up(event.data, ctx, None, event.data["action"].replace("_", " "))


@router.register("installation_repositories", action="added")
async def on_added(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    names = [str(r["full_name"]) for r in event.data.get("repositories_added") or []]
    if names:
        await catch_up(event.data, ctx, names, f"took in {', '.join(names)}")


@router.register("installation", action="deleted")
@router.register("installation", action="suspend")
async def on_ended(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    ctx.log.info("%s %s: its deliveries still queued end after one try each", _who(event.data),
                 "deleted (the App was uninstalled)" if event.data["action"] == "deleted" else "suspended")


@router.register("installation_repositories", action="removed")
async def on_removed(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    names = [str(r["full_name"]) for r in event.data.get("repositories_removed") or []]
    ctx.log.info("%s let go of %s: their deliveries still queued end after one try each", _who(event.data),
                 ", ".join(names) or "no repository")


async def catch_up(data: dict[str, Any], ctx: Context, only: Collection[str] | None, what: str) -> None:
    """Journal and queue the missed lane runs of the installation's repositories (`only`: of
    those). A repository that cannot be read is named in the log (the next reconcile round
    tries it again); the installation's repositories that cannot be listed fail the delivery."""
    if ctx.queue is None:
        raise RuntimeError("no journal to queue the missed lane runs in")
    installation_id = (data.get("installation") or {}).get("id")
    if installation_id is None:  # (an App's events have it; one signed with the secret of a GITHUB_TOKEN foldbot)
        ctx.log.warning("an `installation` event without an installation id: nothing to catch up")
        return
    # a token minted before the change may not reach the repositories added, nor hold the permissions accepted
    ctx.pool.credentials.forget(installation_id)
    problems: list[str] = []
    login = await ctx.pool.bot_login()

    async def no_lanes(api: RepoAPI, head: str, config: RepoConfig, listing: list[dict[str, Any]]) -> None:
        found = await amd_workflows(api, head, config, listing)
        if found:  # (else no AMD runner in sight: foldbot has nothing to say there)
            await unconfigured(api, ctx, login, config, found)

    async def broken(api: RepoAPI, exc: Exception) -> None:  # the dashboard says what to fix, as a run's report would
        await unanalysed(api, ctx, login, str(exc))

    found = await missed_in_installation(ctx.pool, installation_id, login, only=only, no_lanes=no_lanes,
                                         broken=broken, who=_who(data), log=problems.append)
    for problem in problems:
        ctx.log.warning("%s", problem)
    queued = [item for item in found if await ctx.queue(replace(item, found_by=ctx.delivery_id))]
    if queued:
        ctx.log.info("%s %s: %s no dashboard names %s reported now: %s", _who(data), what, _runs(len(queued)),
                     "is" if len(queued) == 1 else "are", ", ".join(f"{item.repo} run {item.run['id']}" for item in queued))
    elif found:
        ctx.log.info("%s %s: %s no dashboard names %s queued by an earlier copy of this event", _who(data), what,
                     _runs(len(found)), "was" if len(found) == 1 else "were")
    else:
        ctx.log.info("%s %s: no lane run to report", _who(data), what)
