"""The pages a reader lives on: the library list, the item page, the home page and the dashboard,
composed from every feature below."""
