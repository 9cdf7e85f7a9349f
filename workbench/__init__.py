"""Skill Workbench: author, validate, run and iterate agent skills and their eval suites."""

__version__ = "0.1.0"
