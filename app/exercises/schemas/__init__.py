"""Shapes of this feature's JSON API."""
