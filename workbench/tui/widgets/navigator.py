"""The navigator: SKILL.md, each eval suite, and its cases with a marker."""

from __future__ import annotations

from dataclasses import dataclass

from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from workbench.session import DELETED, UNPARSED, SkillFile, SkillSession

DOCUMENT = ""  # the pointer of a suite's own fields (not a case)


@dataclass(frozen=True)
class Place:
    """What a navigator node stands for: a file, and a case in it (or DOCUMENT)."""

    rel: str
    pointer: str | None = None


def case_label(skill_file: SkillFile, pointer: str, case: object) -> str:
    errors, warnings = skill_file.case_problems(pointer)
    marker = "[red]✗[/]" if errors else ("[yellow]![/]" if warnings else "[green]✓[/]")
    name = case.get("id") if isinstance(case, dict) else None
    shown = str(name) if name not in (None, "") else f"#{pointer.rsplit('/', 1)[-1]}"
    return f"{marker} {shown}"


def file_label(skill_file: SkillFile) -> str:
    errors, warnings = skill_file.counts()
    dirty = " ●" if skill_file.dirty else ""
    state = {DELETED: " [red](deleted on disk)[/]", UNPARSED: " [red](does not parse)[/]"}.get(skill_file.state, "")
    marker = "[red]✗[/]" if errors else ("[yellow]![/]" if warnings else "[green]✓[/]")
    return f"{marker} {skill_file.rel}{dirty}{state}"


class Navigator(Tree[Place]):
    """Lazy: a suite's cases are added when its node first opens, so a
    10,000-case suite costs nothing until it is looked at."""

    def __init__(self, session: SkillSession, **kwargs) -> None:
        super().__init__(session.name, **kwargs)
        self.session = session
        self.show_root = False
        self.guide_depth = 2

    def on_mount(self) -> None:
        self.rebuild()

    def rebuild(self, keep: Place | None = None) -> None:
        self.clear()
        for skill_file in self.session.files:
            node = self.root.add(file_label(skill_file), Place(skill_file.rel), allow_expand=False)
            if skill_file.document is not None and skill_file.format and skill_file.format.cases:
                self._fill(node, skill_file)
        self.root.expand_all()
        if keep:
            self.select_place(keep)

    def _fill(self, node: TreeNode[Place], skill_file: SkillFile) -> None:
        node.allow_expand = True
        node.add_leaf("[dim]⚙ suite settings[/]", Place(skill_file.rel, DOCUMENT))
        for pointer, case in skill_file.cases():
            node.add_leaf(case_label(skill_file, pointer, case), Place(skill_file.rel, pointer))

    def file_node(self, rel: str) -> TreeNode[Place] | None:
        return next((n for n in self.root.children if n.data and n.data.rel == rel), None)

    def refresh_file(self, skill_file: SkillFile) -> None:
        """Update the markers; rebuild the case list when cases were added or removed.
        A rebuild keeps the selection and does not announce it as a navigation."""
        node = self.file_node(skill_file.rel)
        if node is None:
            self.rebuild()
            return
        node.set_label(file_label(skill_file))
        cases = skill_file.cases()
        leaves = [c for c in node.children if c.data and c.data.pointer not in (None, DOCUMENT)]
        if len(leaves) != len(cases) or (not node.children and skill_file.document is not None
                                         and skill_file.format and skill_file.format.cases):
            selected = self.cursor_node.data if self.cursor_node else None
            with self.prevent(Tree.NodeHighlighted):
                node.remove_children()
                if skill_file.document is not None and skill_file.format and skill_file.format.cases:
                    self._fill(node, skill_file)
                    node.expand()
                if selected:
                    self.select_place(selected)
            return
        for leaf, (pointer, case) in zip(leaves, cases):
            label = case_label(skill_file, pointer, case)
            if str(leaf.label) != label:
                leaf.set_label(label)

    def refresh_case(self, skill_file: SkillFile, pointer: str) -> None:
        node = self.file_node(skill_file.rel)
        if node is None:
            return
        node.set_label(file_label(skill_file))
        for leaf in node.children:
            if leaf.data and leaf.data.pointer == pointer:
                case = dict(skill_file.cases()).get(pointer)
                leaf.set_label(case_label(skill_file, pointer, case))
                return

    def select_place(self, place: Place) -> None:
        """Put the cursor on a place without announcing it (the screen already shows it)."""
        node = self.file_node(place.rel)
        if node is None:
            return
        target = node
        if place.pointer is not None:
            target = next((c for c in node.children if c.data == place), node)
        with self.prevent(Tree.NodeHighlighted):
            self.move_cursor(target)
            self.scroll_to_node(target, animate=False)
