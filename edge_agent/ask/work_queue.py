"""The ask's queue: requests waiting in arrival order, bounded in all and per user, handed to the workers so that no
user has two in progress at once.

One in progress per user keeps each user's answers in the order asked (an assistant's tool calls that build on one
another stay in order) and keeps one user's burst from taking every worker while others wait: with `ask.workers`
at 2, two users' questions run side by side, never one user's two.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

Job = TypeVar("Job")
Refusal = Literal["queue_full", "queue_share_full"]


@dataclass(frozen=True)
class Taken(Generic[Job]):
    """A job taken from the queue for `user`; hand it back to `AskQueue.done` when its reply is written."""

    user: str
    job: Job


class AskQueue(Generic[Job]):
    """At most `size` jobs waiting, `per_user` of them from one user. `take` gives the oldest job whose user has none
    in progress, waiting for one; `done` ends that user's job in progress."""

    def __init__(self, size: int, per_user: int) -> None:
        if size < 1 or per_user < 1:
            raise ValueError(f"a queue holds at least 1 job in all and 1 per user, not {size} and {per_user}")
        self.size = size
        self.per_user = per_user
        self._jobs: collections.deque[Taken[Job]] = collections.deque()
        self._waiting: collections.Counter[str] = collections.Counter()
        self._busy: set[str] = set()
        self._wakers: list[asyncio.Future[None]] = []

    def __len__(self) -> int:
        """The jobs waiting (not those in progress)."""
        return len(self._jobs)

    def waiting(self, user: str) -> int:
        return self._waiting[user]

    def in_progress(self) -> frozenset[str]:
        """The users with a job taken and not yet done."""
        return frozenset(self._busy)

    def admit(self, user: str, job: Job) -> Refusal | None:
        """Queue `job` for `user`, or say why not: `queue_full` (size jobs waiting) or `queue_share_full` (per_user
        of this user's)."""
        if len(self._jobs) >= self.size:
            return "queue_full"
        if self._waiting[user] >= self.per_user:
            return "queue_share_full"
        self._waiting[user] += 1
        self._jobs.append(Taken(user, job))
        self._wake()
        return None

    async def take(self) -> Taken[Job]:
        """The oldest waiting job whose user has none in progress (that user is then in progress), once there is."""
        while True:
            for i, taken in enumerate(self._jobs):
                if taken.user not in self._busy:
                    del self._jobs[i]
                    self._waiting[taken.user] -= 1
                    if self._waiting[taken.user] <= 0:
                        del self._waiting[taken.user]
                    self._busy.add(taken.user)
                    return taken
            waker = asyncio.get_running_loop().create_future()
            self._wakers.append(waker)
            try:
                await waker
            finally:
                if waker in self._wakers:
                    self._wakers.remove(waker)

    def done(self, taken: Taken[Job]) -> None:
        """`taken`'s user has no job in progress any more: their next one may be taken."""
        self._busy.discard(taken.user)
        self._wake()

    def clear(self) -> None:
        """Forget every waiting job (those in progress stay so until done)."""
        self._jobs.clear()
        self._waiting.clear()

    def _wake(self) -> None:
        """Every waiting `take` looks again (a handful of workers: no one is woken for nothing for long)."""
        wakers, self._wakers = self._wakers, []
        for waker in wakers:
            if not waker.done():
                waker.set_result(None)
