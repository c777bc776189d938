"""The runner agent of a worker host (`backprop agent`): it takes runs of one pool from
Redis, hands each to the host's sandbox worker over its Unix socket, and reports events and
outcomes back through Redis. It holds no database credentials and imports nothing of the
database, the services or the web layer (tests/test_architecture.py holds it to that)."""
