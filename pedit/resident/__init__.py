"""The resident model: one process per user, model and load settings keeps the model
loaded between commands (server.py), the commands reach it over a Unix socket as its
clients (client.py), and both speak protocol.py. The client owns the user's files and
every check on them; the resident owns the model and its caches, and answers each request
from that request's settings alone (docs/resident.md)."""
