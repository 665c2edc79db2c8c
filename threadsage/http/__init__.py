"""HTTP: the ASGI app (webhooks, health, metrics), the thread it runs in, and body limits."""
