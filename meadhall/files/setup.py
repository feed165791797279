"""Wire the files domain into an app: the content routes outside /api/v1 and the hourly orphan job.
(The /api/v1 routes are listed in `meadhall.app.api_routers`.)"""

from __future__ import annotations

from fastapi import FastAPI

from meadhall.files.cleanup import register_job
from meadhall.files.routes import content
from meadhall.runtime import Runtime


def install_files(app: FastAPI, rt: Runtime) -> None:
    app.include_router(content)
    register_job(rt)
