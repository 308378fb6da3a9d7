"""A connector's taken-but-unacknowledged messages (edge_agent.connectors.unsettled): intake waits while either bound
is reached,
and resumes once settled messages bring both under it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from edge_agent.connectors.mqtt import MqttMessage
from edge_agent.connectors.unsettled import Unsettled


def message(size: int) -> MqttMessage:
    return MqttMessage("t", b"x" * size, 1, False, 1, datetime(2026, 12, 5, tzinfo=UTC))


async def waits(unsettled: Unsettled) -> bool:
    try:
        await asyncio.wait_for(unsettled.room(), 0.05)
    except TimeoutError:
        return True
    return False


async def test_waits_at_the_byte_bound_until_settled() -> None:
    unsettled = Unsettled(max_messages=100, max_bytes=1000)
    big = [message(600), message(600)]
    unsettled.take(big)
    assert (unsettled.messages, unsettled.bytes) == (2, 1200)
    room = asyncio.create_task(unsettled.room())
    await asyncio.sleep(0.01)
    assert not room.done()
    unsettled.settle(big[:1])
    await asyncio.wait_for(room, 1)
    assert (unsettled.messages, unsettled.bytes) == (1, 600)


async def test_waits_at_the_message_bound() -> None:
    unsettled = Unsettled(max_messages=2, max_bytes=10**9)
    unsettled.take([message(1), message(1)])
    assert await waits(unsettled)
    unsettled.clear()
    assert not await waits(unsettled)


@given(st.lists(st.tuples(st.integers(0, 5000), st.booleans()), max_size=40))
def test_counts_return_to_zero_when_everything_taken_is_settled(sizes: list[tuple[int, bool]]) -> None:
    """Whatever the sizes and the settling order, the counts are the sums of what is still unsettled."""
    unsettled = Unsettled(max_messages=10**6, max_bytes=10**9)
    taken = [message(size) for size, _ in sizes]
    unsettled.take(taken)
    early = [m for m, (_, first) in zip(taken, sizes, strict=True) if first]
    late = [m for m, (_, first) in zip(taken, sizes, strict=True) if not first]
    unsettled.settle(early)
    assert (unsettled.messages, unsettled.bytes) == (len(late), sum(len(m.payload) for m in late))
    unsettled.settle(late)
    assert (unsettled.messages, unsettled.bytes) == (0, 0)
