"""The MQTT client's read gate (`edge_agent.connectors.mqtt.flow.ReadGate`), by hand-worked sequences and Hypothesis,
without a
socket."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.connectors.mqtt.flow import ReadAction, ReadGate

KEEP, PAUSE, RESUME = ReadAction.KEEP, ReadAction.PAUSE, ReadAction.RESUME


def run(gate: ReadGate, steps: list[tuple[int, bool]]) -> list[ReadAction]:
    """The gate's action after each (queue depth, acknowledgement awaited) step, in order."""
    return [gate.update(depth, awaiting) for depth, awaiting in steps]


class TestReadGate:
    def test_pauses_when_the_queue_fills(self) -> None:
        """Reading stops once the queue holds queue_max messages, and only then."""
        gate = ReadGate(queue_max=4)
        assert run(gate, [(1, False), (2, False), (3, False), (4, False)]) == [KEEP, KEEP, KEEP, PAUSE]
        assert gate.paused

    def test_resumes_at_half_full_not_before(self) -> None:
        """Paused at 4 of 4, it stays paused at 3 and resumes at 2 (4 // 2), so the socket is not toggled per
        message."""
        gate = ReadGate(queue_max=4)
        steps = [(4, False), (3, False), (2, False), (1, False)]
        assert run(gate, steps) == [PAUSE, KEEP, RESUME, KEEP]  # 4 full, 3 still paused, 2 half full, 1 reading

    def test_odd_queue_max_resumes_at_the_floor_of_half(self) -> None:
        """queue_max 5 resumes at 2 (5 // 2), not at 3."""
        gate = ReadGate(queue_max=5)
        assert run(gate, [(5, False), (3, False), (2, False)]) == [PAUSE, KEEP, RESUME]

    def test_overshoot_past_queue_max_pauses_once(self) -> None:
        """Messages already read when the queue filled still arrive: depth 5 and 6 of 4 pause once, not again."""
        gate = ReadGate(queue_max=4)
        assert run(gate, [(5, False), (6, False), (3, False), (2, False)]) == [PAUSE, KEEP, KEEP, RESUME]

    def test_never_pauses_while_an_acknowledgement_is_awaited(self) -> None:
        """A full queue while a SUBACK/PUBACK is awaited keeps reading; the pause comes once nothing is awaited."""
        gate = ReadGate(queue_max=4)
        steps = [(4, True), (7, True), (7, False)]  # full, over full (the SUBACK is behind these), SUBACK arrived
        assert run(gate, steps) == [KEEP, KEEP, PAUSE]

    def test_an_awaited_acknowledgement_resumes_a_paused_gate(self) -> None:
        """Paused and still full, awaiting a SUBACK/PUBACK resumes reading at once (it queues behind the messages)."""
        gate = ReadGate(queue_max=4)
        assert run(gate, [(4, False), (4, True), (4, True), (4, False)]) == [PAUSE, RESUME, KEEP, PAUSE]

    def test_reset_reads_a_new_socket(self) -> None:
        """A new socket starts reading even if the old one was paused; a full queue pauses it again on the next
        update."""
        gate = ReadGate(queue_max=4)
        assert run(gate, [(4, False)]) == [PAUSE]
        gate.reset()
        assert not gate.paused
        assert run(gate, [(3, False), (4, False)]) == [KEEP, PAUSE]

    def test_queue_max_one_toggles_between_empty_and_full(self) -> None:
        """queue_max 1: paused with one message queued, resumed once it is taken (1 // 2 = 0)."""
        gate = ReadGate(queue_max=1)
        assert run(gate, [(0, False), (1, False), (1, False), (0, False), (1, False)]) == [
            KEEP,
            PAUSE,
            KEEP,
            RESUME,
            PAUSE,
        ]


class TestReadGateBytes:
    def test_pauses_on_bytes_before_the_count_is_reached(self) -> None:
        """Two messages of 600 bytes fill a 1000-byte bound with 2 of 100 messages queued."""
        gate = ReadGate(queue_max=100, bytes_max=1000)
        assert [gate.update(1, False, 600), gate.update(2, False, 1200)] == [KEEP, PAUSE]

    def test_resumes_only_when_both_bounds_are_at_half(self) -> None:
        gate = ReadGate(queue_max=4, bytes_max=1000)
        assert gate.update(4, False, 1000) is PAUSE
        assert gate.update(2, False, 900) is KEEP  # count at half, bytes not
        assert gate.update(2, False, 500) is RESUME

    def test_an_awaited_acknowledgement_still_wins(self) -> None:
        gate = ReadGate(queue_max=4, bytes_max=1000)
        assert [gate.update(1, True, 5000), gate.update(1, False, 5000)] == [KEEP, PAUSE]


# Steps: a message of that many bytes arrives (only while reading), or -k: the consumer takes k messages.
STEPS = st.lists(st.one_of(st.integers(0, 5000), st.integers(-20, -1)), max_size=300)


class TestReadGateProperty:
    @settings(max_examples=400, deadline=None)
    @given(STEPS, st.integers(1, 30), st.integers(1, 20_000))
    def test_the_queue_stays_within_one_message_of_its_bounds_and_an_empty_queue_is_read(
        self, steps: list[int], queue_max: int, bytes_max: int
    ) -> None:
        """Whatever arrives and is taken: with no acknowledgement awaited, a message arrives only while reading, so
        the queue holds at most queue_max messages and less than bytes_max plus one message's bytes; and a drained
        queue is always read again (no deadlock)."""
        gate = ReadGate(queue_max=queue_max, bytes_max=bytes_max)
        queue: list[int] = []
        for step in steps:
            if step >= 0:
                if gate.paused:
                    continue  # the socket is not read: the message waits at the broker
                queue.append(step)
                gate.update(len(queue), False, sum(queue))
                assert len(queue) <= queue_max
                assert sum(queue) < bytes_max + step or sum(queue) == 0
            else:
                del queue[:-step]
                gate.update(len(queue), False, sum(queue))
                if not queue:
                    assert not gate.paused
