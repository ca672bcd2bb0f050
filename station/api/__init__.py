"""The HTTP and WebSocket API of the live station (FastAPI).

`create_app(station, tokens)` builds the app; its lifespan starts the station in the
background, and every endpoint answers 503 until the station is ready (journal replayed,
`restart` committed, reader started), like a robot server waiting for its hardware.
"""

from station.api.app import create_app

__all__ = ["create_app"]
