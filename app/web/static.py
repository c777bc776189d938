"""Static files with cache headers: versioned addresses (?v=hash) never change content."""

from __future__ import annotations

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope


class VersionedStaticFiles(StaticFiles):
    """Lets browsers keep an asset for a year when its address carries a content hash."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            versioned = b"v=" in scope.get("query_string", b"")
            response.headers["Cache-Control"] = (
                "public, max-age=31536000, immutable" if versioned else "public, max-age=300"
            )
        return response
