"""foldbot's webhook handlers: one router per concern, composed here."""

from gidgethub import routing

from . import pull_request, workflow_run

router = routing.Router(workflow_run.router, pull_request.router)

__all__ = ["router"]
