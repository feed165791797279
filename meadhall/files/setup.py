"""What the files domain adds when the app is built (`create_app`): the content routes outside /api/v1 and the
hourly orphan job.
(The /api/v1 routes are listed in `meadhall.app.api_routers`.)"""

from __future__ import annotations

from fastapi import FastAPI

from meadhall.files.cleanup import add_orphan_job
from meadhall.files.routes import content
from meadhall.runtime import Runtime


def setup(app: FastAPI, rt: Runtime) -> None:
    app.include_router(content)
    add_orphan_job(rt)
