"""Domain errors raised by services; handlers in app.main turn them into pages or JSON."""

from __future__ import annotations


class DomainError(Exception):
    """Base class: a request that cannot be served as asked. `status` is the HTTP status."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    status = 404


class ItemNotFound(NotFound):
    def __init__(self, slug: str) -> None:
        super().__init__(f"No item is called '{slug}'.")
        self.slug = slug


class InvalidFilter(DomainError):
    """A filter names a deck or topic that does not exist."""

    status = 422
