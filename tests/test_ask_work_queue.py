"""AskQueue: the ask's waiting requests, bounded in all and per user, handed out so that no user has two in progress;
hand-worked cases, then Hypothesis over any sequence of admits, takes and dones against a naive reference."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.ask.work_queue import AskQueue, Taken


def take_now(queue: AskQueue[str]) -> Taken[str] | None:
    """What `take` gives at once, or None when it would wait."""

    async def attempt() -> Taken[str] | None:
        task = asyncio.create_task(queue.take())
        await asyncio.sleep(0)  # one turn: a job there to take is taken in it, else the take waits
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None

    return asyncio.run(attempt())


class TestAskQueue:
    def test_jobs_are_taken_in_arrival_order_across_users(self) -> None:
        queue: AskQueue[str] = AskQueue(size=8, per_user=4)
        for user, job in [("ana", "a1"), ("bo", "b1"), ("cy", "c1")]:
            assert queue.admit(user, job) is None
        assert [t.job for t in (take_now(queue), take_now(queue), take_now(queue)) if t] == ["a1", "b1", "c1"]
        assert queue.in_progress() == {"ana", "bo", "cy"}

    def test_a_users_next_job_waits_for_their_one_in_progress(self) -> None:
        """ana a1, ana a2, bo b1: a1 is taken, then b1 (a2 is skipped: ana has a1 in progress); a2 once a1 is done."""
        queue: AskQueue[str] = AskQueue(size=8, per_user=4)
        for user, job in [("ana", "a1"), ("ana", "a2"), ("bo", "b1")]:
            queue.admit(user, job)
        first = take_now(queue)
        assert first is not None and first.job == "a1"
        second = take_now(queue)
        assert second is not None and second.job == "b1"
        assert take_now(queue) is None  # a2 waits: ana's a1 is in progress
        queue.done(first)
        third = take_now(queue)
        assert third is not None and third.job == "a2"

    def test_full_and_share_full(self) -> None:
        """size 2, per_user 1: a user's second waiting job is refused `queue_share_full`; a third job with two
        waiting `queue_full`. A job in progress is no longer waiting: it frees its user's share."""
        queue: AskQueue[str] = AskQueue(size=2, per_user=1)
        assert queue.admit("ana", "a1") is None
        assert queue.admit("ana", "a2") == "queue_share_full"
        assert queue.admit("bo", "b1") is None
        assert queue.admit("cy", "c1") == "queue_full"
        taken = take_now(queue)
        assert taken is not None and taken.job == "a1"
        assert (queue.waiting("ana"), len(queue)) == (0, 1)
        assert queue.admit("ana", "a2") is None

    def test_a_waiting_take_is_woken_by_an_admit_and_by_a_done(self) -> None:
        async def scenario() -> list[str]:
            queue: AskQueue[str] = AskQueue(size=8, per_user=4)
            got: list[str] = []

            async def worker() -> None:
                while True:
                    taken = await queue.take()
                    got.append(taken.job)
                    if taken.job == "a1":
                        await asyncio.sleep(0.05)
                    queue.done(taken)

            task = asyncio.create_task(worker())
            await asyncio.sleep(0.01)
            queue.admit("ana", "a1")  # wakes the waiting take
            queue.admit("ana", "a2")  # waits for a1's done
            await asyncio.sleep(0.1)
            task.cancel()
            return got

        assert asyncio.run(scenario()) == ["a1", "a2"]

    def test_sizes_below_one_are_refused(self) -> None:
        with pytest.raises(ValueError, match="not 0 and 1"):
            AskQueue(size=0, per_user=1)


@dataclass
class Reference:
    """The queue's rules written out plainly: a list of (user, job) waiting, a set of users in progress."""

    size: int
    per_user: int
    waiting: list[tuple[str, str]] = field(default_factory=list)
    busy: set[str] = field(default_factory=set)

    def admit(self, user: str, job: str) -> str | None:
        if len(self.waiting) >= self.size:
            return "queue_full"
        if sum(u == user for u, _ in self.waiting) >= self.per_user:
            return "queue_share_full"
        self.waiting.append((user, job))
        return None

    def take(self) -> tuple[str, str] | None:
        for i, (user, job) in enumerate(self.waiting):
            if user not in self.busy:
                del self.waiting[i]
                self.busy.add(user)
                return user, job
        return None


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("admit"), st.sampled_from(["ana", "bo", "cy", ""])),
        st.tuples(st.just("take"), st.just("")),
        st.tuples(st.just("done"), st.integers(min_value=0, max_value=5).map(str)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(OPS, st.integers(min_value=1, max_value=5), st.integers(min_value=1, max_value=3))
def test_any_sequence_follows_the_reference(ops: list[tuple[str, str]], size: int, per_user: int) -> None:
    """Any admits, takes and dones: the same refusals and the same jobs taken as the reference; no user ever has two
    in progress, and each user's jobs are taken in the order admitted."""
    queue: AskQueue[str] = AskQueue(size=size, per_user=per_user)
    reference = Reference(size, per_user)
    in_progress: list[Taken[str]] = []
    taken_order: dict[str, list[int]] = {}
    for n, (op, arg) in enumerate(ops):
        if op == "admit":
            assert queue.admit(arg, f"{arg}#{n}") == reference.admit(arg, f"{arg}#{n}")
        elif op == "take":
            got, expected = take_now(queue), reference.take()
            assert (None if got is None else (got.user, got.job)) == expected
            if got is not None:
                in_progress.append(got)
                taken_order.setdefault(got.user, []).append(int(got.job.split("#")[1]))
        elif in_progress:
            done = in_progress.pop(int(arg) % len(in_progress))
            queue.done(done)
            reference.busy.discard(done.user)
        assert len(queue) == len(reference.waiting) <= size
        assert queue.in_progress() == reference.busy == {t.user for t in in_progress}
    assert all(order == sorted(order) for order in taken_order.values())
