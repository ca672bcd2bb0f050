"""The baccarat dealer station (see the README and docs/architecture.md)."""
