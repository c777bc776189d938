"""The library: items, their search and the cached catalogue, and the JSON API that lists them."""
