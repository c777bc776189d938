"""The API's schema (/openapi.json) built once, in a thread, beginning when /docs is asked for.

Building it walks every route and model: half a second of CPU on an idle 2-core machine,
more under load. FastAPI builds it inside the event loop on the first /openapi.json, which
held every other request meanwhile; building it at start-up made every app start pay for a
page few visit. Here nothing happens until /docs is served: it starts the build in a thread,
and the browser's request for the schema, which comes after Swagger UI's script has loaded,
waits for that build (off the event loop) or finds it done."""

from __future__ import annotations

import threading
from typing import Any

from anyio import to_thread
from fastapi import FastAPI
from fastapi.responses import JSONResponse

SCHEMA_PATH = "/openapi.json"


class ApiSchema:
    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self._lock = threading.Lock()  # one build, however many ask during it
        self._started = False

    def start(self) -> None:
        """Begin building the schema in a thread, unless it is built or being built."""
        with self._lock:
            if self._started or self.app.openapi_schema is not None:
                return
            self._started = True
        threading.Thread(target=self.build, daemon=True).start()

    def build(self) -> dict[str, Any]:
        """The schema, built on the first call (the others wait for it)."""
        with self._lock:
            return self.app.openapi()

    async def response(self) -> JSONResponse:
        return JSONResponse(await to_thread.run_sync(self.build))


def add_schema_route(app: FastAPI) -> ApiSchema:
    """Serve the schema at SCHEMA_PATH (the app must be made with openapi_url=None)."""
    schema = ApiSchema(app)
    app.add_api_route(SCHEMA_PATH, schema.response, include_in_schema=False)
    return schema
