"""foldbot's webhook handlers: one router per concern, composed here."""

from gidgethub import routing

from . import installation, issue_comment, pull_request, workflow_run

router = routing.Router(workflow_run.router, pull_request.router, issue_comment.router, installation.router)

__all__ = ["router"]
