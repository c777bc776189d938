"""The ASGI entry point for servers: `uvicorn app.asgi:app`."""

import sys

from app import logs
from app.db import GIL_SWITCH_SECONDS
from app.main import create_app
from app.settings import Settings

settings = Settings()
# Each server process imports this module (uvicorn's workers are spawned, not forked), so each
# configures its own logging and its GIL's switch interval.
logs.configure(settings.log_format)
sys.setswitchinterval(GIL_SWITCH_SECONDS)
app = create_app(settings)
