"""Content importer: Markdown files in content/ → rows in the database, HTML rendered once."""

from app.importer.errors import ContentError
from app.importer.load import ImportReport, import_content

__all__ = ["ContentError", "ImportReport", "import_content"]
