"""Runs: each eval x condition x repeat dispatched to an agent in a private workspace."""
