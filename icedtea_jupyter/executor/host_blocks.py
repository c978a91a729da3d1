"""The host's side of running in blocks (``blocks.py``): its checks between blocks, its
counts read from its feed's C iterators, its failure and its end (``WorkerHost``
inherits them)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .records import NO_RECORD as _NO_RECORD
from .status import EXHAUSTED_EVENT

if TYPE_CHECKING:
    from .plugin import PluginSet


class InBlocks:
    """A ``WorkerHost`` whose function runs in blocks: what its feed and chain call."""

    count_in: Callable[[], int] | None
    count_out: Callable[[], int] | None
    records_in: int
    plugins: PluginSet
    _step: int
    _lost: int

    if TYPE_CHECKING:  # WorkerHost's and PluginTaps'
        def check(self, n_in: int, n_out: int, record: Any,
                  processed: int | None = None) -> None: ...
        def keep_final_locals(self) -> None: ...
        def advance(self, event: str) -> bool: ...
        def fail(self, exc: BaseException, record: Any) -> None: ...
        def end(self, n_in: int, n_out: int) -> None: ...

    def block_check(self, pulled: int, first: Any) -> int:
        """A feed's owner between blocks, ``first`` pulled and not yet processed; returns
        the next block's size."""
        self.check(pulled, self._outputs_so_far(), first)
        return self._step

    def block_boundary(self, ended: bool = False, sample: Any = _NO_RECORD) -> None:
        """A host that joined a feed, or rides on it upstream of its owner (``sample``: an
        input of its own), between blocks (``ended``: the feed's input ran out).
        Checked from the feed's first boundary on, before its own first record: a
        block can hand it all its records, and its first check is its initial snapshot."""
        n_in = self._inputs_so_far()
        if not ended:
            self.check(n_in, self._outputs_so_far(), sample, processed=n_in)
        else:
            self.keep_final_locals()  # its input ran out: a generator's last state
            self.plugins.run("boundary", n_in, self._outputs_so_far())

    def outputs_of_map(self) -> int:
        return self._inputs_so_far() - self._lost

    def fail_in_blocks(self, exc: BaseException, record: Any, culprit: bool) -> None:
        if culprit:
            self.records_in = self._inputs_so_far()
            if self.count_out == self.outputs_of_map:
                self._lost = 1  # the record it failed on has no output
        self.fail(exc, record)

    def end_in_blocks(self, exhausted: bool) -> None:
        if exhausted:
            self.advance(EXHAUSTED_EVENT)
        self.end(self._inputs_so_far(), self._outputs_so_far())

    def _inputs_so_far(self) -> int:
        assert self.count_in is not None  # in blocks: set by blocks.HostChain.add
        return self.count_in()

    def _outputs_so_far(self) -> int:
        assert self.count_out is not None  # in blocks: set by blocks.HostChain.add
        return self.count_out()

