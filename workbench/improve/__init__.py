"""Improve mode: versions v0..vN of a skill with parent links, history.json,
evaluation against the current best, promotion."""
