"""The navigator: SKILL.md, each eval suite, and its cases with a marker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from workbench.formats import pointer as ptr
from workbench.formats.drafts import is_drafts
from workbench.session import DELETED, UNPARSED, SkillFile, SkillSession
from workbench.session.cases import DOCUMENT  # the pointer of a suite's own fields (not a case)
from workbench.tui import compat
from workbench.tui.widgets.keys import KeysInOrder

PAGE = 200  # cases per page in big suites
PAGE_MARK = "#page:"  # page nodes' pointer prefix (never a JSON Pointer, which starts with /)


@dataclass(frozen=True)
class Place:
    """What a navigator node stands for: a file, and a case in it (or DOCUMENT)."""

    rel: str
    pointer: str | None = None


LABEL_WIDTH = 30


MARKERS = {"error": ("✗", "red"), "warning": ("!", "yellow"), "": ("✓", "green")}


def case_label(skill_file: SkillFile, pointer: str, case: object) -> Text:
    """The marker and the case's name, as Text: a big suite has thousands, and markup
    would be parsed for each (a case's name is shown as it is, never as markup)."""
    errors, warnings = skill_file.case_problems(pointer)
    marker = MARKERS["error" if errors else "warning" if warnings else ""]
    name = case.get(_name_field(skill_file, pointer)) if isinstance(case, dict) else None
    shown = str(name) if name not in (None, "") else f"#{pointer.rsplit('/', 1)[-1]}"
    if len(shown) > LABEL_WIDTH:  # a trigger set's cases are named by their query: a sentence
        shown = shown[: LABEL_WIDTH - 1] + "…"
    return Text.assemble(marker, " ", shown)


def _name_field(skill_file: SkillFile, pointer: str) -> str:
    """What names a case in its list: its id, or a trigger query."""
    list_pointer = pointer.rsplit("/", 1)[0]
    cases = skill_file.format.cases if skill_file.format else ()
    return next((c.id_field for c in cases if c.pointer == list_pointer), "id")


def file_label(skill_file: SkillFile) -> str:
    errors, warnings = skill_file.counts()
    dirty = " ●" if skill_file.dirty else ""
    state = {DELETED: " [red](deleted on disk)[/]", UNPARSED: " [red](does not parse)[/]"}.get(skill_file.state, "")
    marker = "[red]✗[/]" if errors else ("[yellow]![/]" if warnings else "[green]✓[/]")
    drafts = " [i](drafts: ctrl+b accepts one)[/]" if is_drafts(skill_file.rel) else ""
    return f"{marker} {skill_file.rel}{dirty}{state}{drafts}"


class Navigator(KeysInOrder, Tree[Place]):
    """Lazy: a suite's cases are added when its node first opens, so a
    10,000-case suite costs nothing until it is looked at.

    Moving the cursor, by any key or a click, opens what it is on (`moved`, set
    by the screen), at once: the Tree's NodeHighlighted would reach the screen
    three message queues later. Its own keys act where it gets them (KeysInOrder),
    not after bubbling up to the app. Keys typed meanwhile wait until the case
    is open (workbench/tui/keystrokes.py), so the next key acts on it."""

    def __init__(self, session: SkillSession, **kwargs: Any) -> None:
        # each node's width as last drawn: its label, whether it has a toggle, open, the width
        self._widths: WeakKeyDictionary[TreeNode[Place], tuple[Text, bool, bool, int]] = WeakKeyDictionary()
        self._adding = 0  # nodes are being added in a row (_adding_nodes)
        super().__init__(session.name, **kwargs)
        self.session = session
        self.moved: Callable[[Place], None] | None = None  # set by the screen: opens what the cursor is on
        self._quiet = False  # the cursor is put on what the screen already shows: not announced
        self.show_root = False
        self.guide_depth = 2
        # each node's label as last set
        self._labels: WeakKeyDictionary[TreeNode[Place], str | Text] = WeakKeyDictionary()

    def on_mount(self) -> None:
        self.rebuild()

    def get_label_width(self, node: TreeNode[Place]) -> int:
        """The width of a node's line as Tree measures it (drawing its label), drawn once per
        label: Tree measures every line's at each change of its lines (each case of a big
        suite, three times over before its first form was painted)."""
        label, toggle, opened = compat.node_label(node), compat.node_expandable(node), node.is_expanded
        known = self._widths.get(node)
        if known is not None and known[0] is label and known[1:3] == (toggle, opened):
            return known[3]
        width = super().get_label_width(node)
        self._widths[node] = (label, toggle, opened, width)
        return width

    def notify_style_update(self) -> None:
        """New styles are new colours for the same lines: the lines drawn are drawn again.
        Tree lays its lines out anew (every case's label drawn again to measure the widest)
        though styles change neither its lines nor their widths: five times over a 1,000-case
        suite before its first form was painted (mounted, focused, themed)."""
        compat.restyle_lines(self)

    def watch_cursor_line(self, previous_line: int, line: int) -> None:
        super().watch_cursor_line(previous_line, line)
        node = self.cursor_node
        if previous_line != line and not self._quiet and self.moved and node is not None and node.data is not None:
            self.moved(node.data)

    def _invalidate(self) -> None:
        if not self._adding:
            super()._invalidate()

    @contextmanager
    def _adding_nodes(self) -> Iterator[None]:
        """Nodes added in a row: Tree forgets its lines and asks for a layout of the screen
        at each node added (a thousand times for a 1,000-case suite); here once, after the
        last. Nothing reads the lines meanwhile."""
        self._adding += 1
        try:
            yield
        finally:
            self._adding -= 1
            self._invalidate()

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        """Cursor moves that are not the person's: announced neither way."""
        self._quiet = True
        try:
            with self.prevent(Tree.NodeHighlighted):
                yield
        finally:
            self._quiet = False

    def rebuild(self, keep: Place | None = None) -> None:
        with self._adding_nodes():
            self.clear()
            for skill_file in self.session.files:
                node = self.root.add(file_label(skill_file), Place(skill_file.rel), allow_expand=False)
                if skill_file.document is not None and skill_file.format and skill_file.format.cases:
                    self._fill(node, skill_file)
                    for page in node.children:  # every page is opened: filled here, the list is built once
                        self._fill_page(page)
            _open_all(self.root)
        if keep:
            self.select_place(keep)

    def _fill(self, node: TreeNode[Place], skill_file: SkillFile) -> None:
        node.allow_expand = True
        node.add_leaf("[dim]⚙ suite settings[/]", Place(skill_file.rel, DOCUMENT))
        cases = skill_file.cases()
        if len(cases) <= PAGE:
            for pointer, case in cases:
                node.add_leaf(case_label(skill_file, pointer, case), Place(skill_file.rel, pointer))
            return
        # Big suites: cases in pages, each filled when first opened, so the tree
        # never holds (or redraws) thousands of lines.
        for start in range(0, len(cases), PAGE):
            end = min(start + PAGE, len(cases))
            page = node.add(f"[dim]cases {start + 1}–{end}[/]", Place(skill_file.rel, f"{PAGE_MARK}{start}"))
            page.allow_expand = True

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Place]) -> None:
        self._fill_page(event.node)

    def _fill_page(self, page: TreeNode[Place]) -> None:
        place = page.data
        if not place or place.pointer is None or not place.pointer.startswith(PAGE_MARK) or page.children:
            return
        skill_file = self.session.file(place.rel)
        if skill_file is None:
            return
        start = int(place.pointer[len(PAGE_MARK) :])
        with self._adding_nodes():
            for pointer, case in skill_file.cases()[start : start + PAGE]:
                page.add_leaf(case_label(skill_file, pointer, case), Place(skill_file.rel, pointer))

    def _leaves(self, node: TreeNode[Place]) -> list[TreeNode[Place]]:
        """Case nodes under a file node, looking into pages that are filled."""
        out: list[TreeNode[Place]] = []
        for child in node.children:
            if child.data and (child.data.pointer or "").startswith(PAGE_MARK):
                out.extend(child.children)
            elif child.data and child.data.pointer not in (None, DOCUMENT):
                out.append(child)
        return out

    def _case_node(self, node: TreeNode[Place], pointer: str, expand: bool = False) -> TreeNode[Place] | None:
        index = _index(pointer)
        pages = [c for c in node.children if c.data and (c.data.pointer or "").startswith(PAGE_MARK)]
        if pages and index is not None:
            page = pages[min(index // PAGE, len(pages) - 1)]
            if expand:
                self._fill_page(page)
                if not page.is_expanded:  # expanding lays the whole list out again
                    page.expand()
            node = page
        return next((c for c in node.children if c.data and c.data.pointer == pointer), None)

    def file_node(self, rel: str) -> TreeNode[Place] | None:
        return next((n for n in self.root.children if n.data and n.data.rel == rel), None)

    def refresh_file(self, skill_file: SkillFile) -> None:
        """Update the markers; rebuild the case list when cases were added or removed.
        A rebuild keeps the selection and does not announce it as a navigation."""
        node = self.file_node(skill_file.rel)
        if node is None:
            self.rebuild()
            return
        self._relabel(node, file_label(skill_file))
        cases = skill_file.cases()
        leaves = self._leaves(node)
        paged = any((c.data.pointer or "").startswith(PAGE_MARK) for c in node.children if c.data)
        expected = -(-len(cases) // PAGE) if len(cases) > PAGE else len(cases)
        shown = sum(1 for c in node.children if c.data and c.data.pointer not in (None, DOCUMENT))
        if (
            shown != expected
            or paged != (len(cases) > PAGE)
            or (not node.children and skill_file.document is not None and skill_file.format and skill_file.format.cases)
        ):
            selected = self.cursor_node.data if self.cursor_node else None
            with self._quietly():
                with self._adding_nodes():
                    node.remove_children()
                    if skill_file.document is not None and skill_file.format and skill_file.format.cases:
                        self._fill(node, skill_file)
                        node.expand()
                if selected:
                    self.select_place(selected)
            return
        by_pointer = dict(cases)
        for leaf in leaves:
            pointer = leaf.data.pointer if leaf.data else None
            if pointer is not None and pointer in by_pointer:
                self._relabel(leaf, case_label(skill_file, pointer, by_pointer[pointer]))

    def refresh_case(self, skill_file: SkillFile, pointer: str) -> None:
        node = self.file_node(skill_file.rel)
        if node is None:
            return
        self._relabel(node, file_label(skill_file))
        leaf = self._case_node(node, pointer)
        if leaf is not None and skill_file.document is not None:
            case = ptr.resolve(skill_file.document.data, ptr.split(pointer))
            self._relabel(leaf, case_label(skill_file, pointer, case))

    def select_place(self, place: Place) -> None:
        """Put the cursor on a place without announcing it (the screen already shows it)."""
        node = self.file_node(place.rel)
        if node is None:
            return
        target = node
        if place.pointer == DOCUMENT:
            target = next((c for c in node.children if c.data == place), node)
        elif place.pointer is not None:
            target = self._case_node(node, place.pointer, expand=True) or node
        with self._quietly():
            self.move_cursor(target)
            self.scroll_to_node(target, animate=False)

    def _relabel(self, node: TreeNode[Place], label: str | Text) -> None:
        """Set a label only when it changed, and repaint only its line: Tree's set_label
        repaints the node's every line below it too (a file's label: the whole list, on
        each key that changes the file's marker)."""
        if self._labels.get(node) != label:
            self._labels[node] = label
            compat.relabel(self, node, label)


def _open_all(node: TreeNode[Place]) -> None:
    """node and every node under it that holds others, opened: Tree's expand_all posts a
    NodeExpanded for each node, each case's too (a thousand messages through the list's
    queue and the screen's for a 1,000-case suite), though a case has nothing to open."""
    node.expand()
    for child in node.children:
        if child.children:
            _open_all(child)


def _index(pointer: str) -> int | None:
    last = pointer.rsplit("/", 1)[-1]
    return int(last) if last.isdigit() else None
