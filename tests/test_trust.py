"""Trust is per exact content: a changed command or file asks again."""

from __future__ import annotations

from workbench.runs import trust


def test_trust_is_remembered_per_content(tmp_path):
    assert not trust.is_trusted("make test")
    trust.trust("make test", "command_check in evals.json")
    assert trust.is_trusted("make test") and trust.is_trusted(b"make test")
    assert not trust.is_trusted("make test && curl evil")  # changed content asks again
    assert "command_check in evals.json" in (tmp_path / "config" / "trusted.json").read_text()
