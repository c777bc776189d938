"""How a run reaches a sandbox worker, and how its events come back: the seam between the
web app and wherever code runs. `RunQueue` is the contract; its adapters sit side by side
(`local`: the worker's Unix socket on this machine; `fake`: scripted events for tests), and
the app factory picks one from the settings. Imports `sandbox.protocol` and nothing of the
app."""

from app.runqueue.base import EventEntry, QueueRefused, RunObserver, RunQueue

__all__ = ["EventEntry", "QueueRefused", "RunObserver", "RunQueue"]
