"""A question's words resolved to what the tools take: its time window (site timezone, shifts) and its subject
(line, asset, tag), or a Clarification with the candidates when a name is ambiguous or unknown."""

from edge_agent.ask.answers import Clarification
from edge_agent.ask.resolve.names import (
    Subject,
    as_asset,
    each_said,
    listed,
    one_of,
    only_asset,
    other_equipment,
    plural_assets,
    resolve_subject,
    too_few,
    without_left_out,
)
from edge_agent.ask.resolve.spelling import respelled
from edge_agent.ask.resolve.text import (
    asides_apart,
    asked_sentence,
    asks,
    corrected,
    fold,
    newest_part,
    sentences_of,
    without_aside,
    without_circumstance,
    without_pasted,
    without_purpose,
    without_signature,
    without_unwanted,
)
from edge_agent.ask.resolve.times import earliest_said, find_instant, find_window, resolve_window, whole_history

__all__ = [
    "asides_apart",
    "corrected",
    "Clarification",
    "Subject",
    "as_asset",
    "each_said",
    "asked_sentence",
    "asks",
    "sentences_of",
    "earliest_said",
    "find_instant",
    "find_window",
    "fold",
    "newest_part",
    "listed",
    "one_of",
    "only_asset",
    "other_equipment",
    "plural_assets",
    "too_few",
    "resolve_subject",
    "respelled",
    "resolve_window",
    "without_aside",
    "without_left_out",
    "without_circumstance",
    "without_pasted",
    "without_purpose",
    "without_signature",
    "whole_history",
    "without_unwanted",
]
