"""`workbench validate`'s use case: every skill, eval suite and workspace artifact under the given paths read
against its format, one report per file (diagnostics with line and column). The edges ask here; the work is
validate/tree.py's."""

from __future__ import annotations

from workbench.validate.tree import validate_paths

__all__ = ["validate_paths"]
