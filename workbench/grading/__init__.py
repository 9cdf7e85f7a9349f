"""Grading: one grader per assertion kind, each returning passed plus evidence."""
