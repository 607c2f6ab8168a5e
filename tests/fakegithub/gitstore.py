"""A content-addressed git object store with real git SHA-1s.

Blobs, trees and commits are hashed exactly as git hashes them, so a blob SHA
returned by the fake equals ``git hash-object`` of the same bytes, and tree and
commit SHAs are the ones git would compute for the same content and metadata.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

ObjectType = Literal["blob", "tree", "commit"]

FILE_MODE = "100644"
EXECUTABLE_MODE = "100755"
SYMLINK_MODE = "120000"
SUBMODULE_MODE = "160000"
TREE_MODE = "040000"
VALID_MODES: Mapping[str, ObjectType] = {
    FILE_MODE: "blob",
    EXECUTABLE_MODE: "blob",
    SYMLINK_MODE: "blob",
    SUBMODULE_MODE: "commit",
    TREE_MODE: "tree",
}
EMPTY_TREE_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def git_hash(kind: ObjectType, payload: bytes) -> str:
    """Hash an object the way git does: ``sha1(b"<kind> <len>\\0" + payload)``."""
    return hashlib.sha1(b"%s %d\x00%s" % (kind.encode(), len(payload), payload)).hexdigest()


def blob_sha(data: bytes) -> str:
    return git_hash("blob", data)


@dataclass(frozen=True)
class Blob:
    data: bytes


@dataclass(frozen=True)
class TreeEntry:
    name: str
    mode: str
    type: ObjectType
    sha: str


@dataclass(frozen=True)
class Tree:
    entries: tuple[TreeEntry, ...]


@dataclass(frozen=True)
class Signature:
    name: str
    email: str
    date: str  # ISO 8601, e.g. 2024-01-02T03:04:05Z

    def git_line(self) -> str:
        moment = datetime.fromisoformat(self.date.replace("Z", "+00:00"))
        offset = moment.utcoffset()
        minutes = int(offset.total_seconds() // 60) if offset is not None else 0
        sign = "-" if minutes < 0 else "+"
        minutes = abs(minutes)
        return (
            f"{self.name} <{self.email}> {int(moment.timestamp())} "
            f"{sign}{minutes // 60:02d}{minutes % 60:02d}"
        )


@dataclass(frozen=True)
class Commit:
    tree: str
    parents: tuple[str, ...]
    author: Signature
    committer: Signature
    message: str


GitObject = Blob | Tree | Commit


@dataclass(frozen=True)
class FlatEntry:
    """A non-tree entry of a flattened tree: a file, symlink or submodule."""

    mode: str
    type: ObjectType
    sha: str


class GitObjectError(ValueError):
    """A git object is missing or of the wrong type."""


def remove_path(flat: dict[str, FlatEntry], path: str) -> bool:
    """Remove ``path`` and everything below it; report whether anything was removed."""
    doomed = [key for key in flat if key == path or key.startswith(f"{path}/")]
    for key in doomed:
        del flat[key]
    return bool(doomed)


def set_path(flat: dict[str, FlatEntry], path: str, entry: FlatEntry) -> None:
    """Put ``entry`` at ``path``, replacing a directory there or a file in its way
    (writing ``a/b`` removes a file ``a``; writing ``a`` removes a directory ``a``)."""
    remove_path(flat, path)
    parts = path.split("/")
    for depth in range(1, len(parts)):
        flat.pop("/".join(parts[:depth]), None)
    flat[path] = entry


def _entry_sort_key(entry: TreeEntry) -> bytes:
    # git orders tree entries by name, comparing a subtree as if it were "name/".
    return entry.name.encode() + (b"/" if entry.type == "tree" else b"")


class GitStore:
    """In-memory object database shared by all repositories of one fake."""

    def __init__(self) -> None:
        self._objects: dict[str, GitObject] = {EMPTY_TREE_SHA: Tree(())}

    def __contains__(self, sha: object) -> bool:
        return sha in self._objects

    def get(self, sha: str) -> GitObject | None:
        return self._objects.get(sha)

    def kind(self, sha: str) -> ObjectType | None:
        obj = self._objects.get(sha)
        if isinstance(obj, Blob):
            return "blob"
        if isinstance(obj, Tree):
            return "tree"
        if isinstance(obj, Commit):
            return "commit"
        return None

    def blob(self, sha: str) -> Blob:
        obj = self._objects.get(sha)
        if not isinstance(obj, Blob):
            raise GitObjectError(f"{sha} is not a blob")
        return obj

    def tree(self, sha: str) -> Tree:
        obj = self._objects.get(sha)
        if not isinstance(obj, Tree):
            raise GitObjectError(f"{sha} is not a tree")
        return obj

    def commit(self, sha: str) -> Commit:
        obj = self._objects.get(sha)
        if not isinstance(obj, Commit):
            raise GitObjectError(f"{sha} is not a commit")
        return obj

    def commits(self) -> Iterator[str]:
        return (sha for sha, obj in self._objects.items() if isinstance(obj, Commit))

    # -- writing -----------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        sha = blob_sha(data)
        self._objects.setdefault(sha, Blob(data))
        return sha

    def put_tree(self, entries: Iterable[TreeEntry]) -> str:
        ordered = tuple(sorted(entries, key=_entry_sort_key))
        payload = b"".join(
            b"%s %s\x00%s"
            % (entry.mode.lstrip("0").encode(), entry.name.encode(), bytes.fromhex(entry.sha))
            for entry in ordered
        )
        sha = git_hash("tree", payload)
        self._objects.setdefault(sha, Tree(ordered))
        return sha

    def put_commit(
        self,
        *,
        tree: str,
        parents: Iterable[str],
        author: Signature,
        committer: Signature,
        message: str,
    ) -> str:
        parents = tuple(parents)
        lines = [f"tree {tree}"]
        lines += [f"parent {parent}" for parent in parents]
        lines += [f"author {author.git_line()}", f"committer {committer.git_line()}", ""]
        payload = ("\n".join(lines) + "\n" + message).encode()
        sha = git_hash("commit", payload)
        self._objects.setdefault(sha, Commit(tree, parents, author, committer, message))
        return sha

    # -- tree helpers ------------------------------------------------------

    def flatten(self, tree_sha: str, prefix: str = "") -> dict[str, FlatEntry]:
        """Map every non-tree path below ``tree_sha`` to its entry."""
        flat: dict[str, FlatEntry] = {}
        for entry in self.tree(tree_sha).entries:
            path = f"{prefix}{entry.name}"
            if entry.type == "tree":
                flat.update(self.flatten(entry.sha, f"{path}/"))
            else:
                flat[path] = FlatEntry(entry.mode, entry.type, entry.sha)
        return flat

    def build_tree(self, flat: Mapping[str, FlatEntry]) -> str:
        """Write the nested trees for a flat ``path -> entry`` mapping; return the root."""
        children: dict[str, dict[str, FlatEntry]] = {}
        entries: list[TreeEntry] = []
        for path, item in flat.items():
            head, sep, rest = path.partition("/")
            if sep:
                children.setdefault(head, {})[rest] = item
            else:
                entries.append(TreeEntry(head, item.mode, item.type, item.sha))
        for name, sub in children.items():
            entries.append(TreeEntry(name, TREE_MODE, "tree", self.build_tree(sub)))
        return self.put_tree(entries)

    def walk(self, tree_sha: str, prefix: str = "") -> Iterator[tuple[str, TreeEntry]]:
        """Yield ``(path, entry)`` for every entry, trees included, depth first."""
        for entry in self.tree(tree_sha).entries:
            path = f"{prefix}{entry.name}"
            yield path, entry
            if entry.type == "tree":
                yield from self.walk(entry.sha, f"{path}/")

    def lookup(self, tree_sha: str, path: str) -> TreeEntry | None:
        """Find the entry at ``path`` (no leading slash) below ``tree_sha``."""
        current = TreeEntry("", TREE_MODE, "tree", tree_sha)
        for part in [p for p in path.split("/") if p]:
            if current.type != "tree":
                return None
            found = [entry for entry in self.tree(current.sha).entries if entry.name == part]
            if not found:
                return None
            current = found[0]
        return current

    # -- history -----------------------------------------------------------

    def ancestors(self, sha: str) -> set[str]:
        """All commits reachable from ``sha``, itself included."""
        seen: set[str] = set()
        stack = [sha]
        while stack:
            current = stack.pop()
            if current in seen or not isinstance(self._objects.get(current), Commit):
                continue
            seen.add(current)
            stack.extend(self.commit(current).parents)
        return seen

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return ancestor in self.ancestors(descendant)
