"""The ASGI entry point for servers: `uvicorn app.asgi:app`."""

from app import logs
from app.main import create_app
from app.settings import Settings

settings = Settings()
# Each server process imports this module (uvicorn's workers are spawned, not forked), so each
# configures its own logging.
logs.configure(settings.log_format)
app = create_app(settings)
