"""Radix-tree prefix cache with a token capacity, leaf-only LRU eviction and lock references.

Modelled on SGLang's ``RadixCache`` (``match_prefix``, ``insert``, ``evict``, ``inc/dec_lock_ref``); written
from its documented behaviour, not its code.  ``page_size > 1`` gives vLLM-style block granularity: only whole
pages are matched and stored.

Each node holds a token segment ``key`` and an optional ``value`` whose first axis runs over the same tokens
(``None`` in the simulator; the KV tensor [len, L, 2, H, dh] in the real engine).  A partial match splits the
node, slicing its value along that axis.  Invariant: ``total_size`` = Σ node key lengths ≤ capacity whenever
the scheduler has evicted enough (``ensure``).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any


class Node:
    __slots__ = ("key", "value", "children", "parent", "lock_ref", "last_access")

    def __init__(self, key: tuple[int, ...] = (), value: Any = None, parent: Node | None = None) -> None:
        self.key = key
        self.value = value
        self.children: dict[tuple[int, ...], Node] = {}
        self.parent = parent
        self.lock_ref = 0
        self.last_access = 0


class RadixCache:
    """Prefix cache over token sequences.  ``capacity`` in tokens (None = unbounded)."""

    def __init__(self, capacity: int | None = None, page_size: int = 1) -> None:
        self.capacity = capacity
        self.page = int(page_size)
        self.root = Node()
        self.root.lock_ref = 1  # never evicted
        self.total_size = 0
        self.evicted_tokens = 0
        self.evicted_nodes = 0
        self._clock = itertools.count(1)

    # -- helpers ----------------------------------------------------------------------------
    def _child_key(self, key: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(key[: self.page])

    def _match_len(self, a: tuple[int, ...], b: tuple[int, ...]) -> int:
        n = min(len(a), len(b))
        i = 0
        while i < n and a[i] == b[i]:
            i += 1
        return i - i % self.page

    def _split(self, node: Node, k: int) -> Node:
        """Split ``node`` after its first k tokens; returns the new upper node."""
        upper = Node(node.key[:k], None if node.value is None else node.value[:k], node.parent)
        upper.lock_ref, upper.last_access = node.lock_ref, node.last_access
        node.parent.children[self._child_key(upper.key)] = upper
        node.key = node.key[k:]
        node.value = None if node.value is None else node.value[k:]
        node.parent = upper
        upper.children[self._child_key(node.key)] = node
        return upper

    def _trim(self, tokens: list[int] | tuple[int, ...]) -> tuple[int, ...]:
        t = tuple(tokens)
        return t[: len(t) - len(t) % self.page]

    # -- API --------------------------------------------------------------------------------
    def match_prefix(self, tokens: list[int] | tuple[int, ...]) -> tuple[int, Node, list[Any]]:
        """Longest cached prefix: (length, last node, node values root→node).  Touches the path (LRU)."""
        key = self._trim(tokens)
        node, n, values = self.root, 0, []
        now = next(self._clock)
        while n < len(key):
            child = node.children.get(self._child_key(key[n:]))
            if child is None:
                break
            k = self._match_len(child.key, key[n:])
            if k == 0:
                break
            if k < len(child.key):
                child = self._split(child, k)
            child.last_access = now
            values.append(child.value)
            n += k
            node = child
        return n, node, values

    def insert(self, tokens: list[int] | tuple[int, ...], value: Any = None) -> tuple[int, Node]:
        """Insert ``tokens`` (``value[i]`` belongs to token i); returns (tokens already present, leaf node)."""
        key = self._trim(tokens)
        node, n = self.root, 0
        now = next(self._clock)
        while n < len(key):
            child = node.children.get(self._child_key(key[n:]))
            if child is None:
                rest = key[n:]
                new = Node(rest, None if value is None else value[n : len(key)], node)
                new.last_access = now
                node.children[self._child_key(rest)] = new
                self.total_size += len(rest)
                return n, new
            k = self._match_len(child.key, key[n:])
            if k < len(child.key):
                child = self._split(child, k)
            child.last_access = now
            n += k
            node = child
        return n, node

    def inc_lock_ref(self, node: Node) -> None:
        while node is not None:
            node.lock_ref += 1
            node = node.parent

    def dec_lock_ref(self, node: Node) -> None:
        while node is not None:
            node.lock_ref -= 1
            if node.lock_ref < 0:
                raise RuntimeError("lock reference below zero")
            node = node.parent

    def _leaves(self) -> list[Node]:
        out, stack = [], [self.root]
        while stack:
            nd = stack.pop()
            if not nd.children and nd is not self.root:
                out.append(nd)
            stack.extend(nd.children.values())
        return out

    def evict(self, n_tokens: int) -> int:
        """Evict ≥ n_tokens from unlocked leaves, least recently used first; returns tokens evicted."""
        heap = [(nd.last_access, id(nd), nd) for nd in self._leaves() if nd.lock_ref == 0]
        heapq.heapify(heap)
        freed = 0
        while freed < n_tokens and heap:
            _, _, nd = heapq.heappop(heap)
            parent = nd.parent
            del parent.children[self._child_key(nd.key)]
            freed += len(nd.key)
            self.total_size -= len(nd.key)
            self.evicted_nodes += 1
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, (parent.last_access, id(parent), parent))
        self.evicted_tokens += freed
        return freed

    def ensure(self, n_new: int) -> bool:
        """Make room for n_new tokens (evicting); False if locked nodes leave too little room."""
        if self.capacity is None:
            return True
        over = self.total_size + n_new - self.capacity
        if over > 0:
            self.evict(over)
        return self.total_size + n_new <= self.capacity

    # -- introspection (tests) --------------------------------------------------------------
    def nodes(self) -> list[Node]:
        out, stack = [], list(self.root.children.values())
        while stack:
            nd = stack.pop()
            out.append(nd)
            stack.extend(nd.children.values())
        return out

    def stored_tokens(self) -> int:
        return sum(len(nd.key) for nd in self.nodes())
