"""The workspace beside a skill, and everything that writes it: where iterations and runs lie
(layout), who holds it (lock), the versions store (versions.git, versions) and the older layout
it imports (legacy), the journal that changes them all-or-nothing, and the git plumbing the
stores keep their trees with (git_objects, trees, safe_git)."""
