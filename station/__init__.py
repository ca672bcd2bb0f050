"""The baccarat dealer station (see the README, docs/index.md and docs/architecture.md)."""
