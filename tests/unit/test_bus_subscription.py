"""The bus's subscriptions: FastStream copies one on every access of its stream (with the
broker's prefix); the cheap copy must still be a copy of its own with every setting kept."""

from __future__ import annotations

from faststream.redis import StreamSub

from shared.bus import Subscription


def test_a_prefixed_subscription_is_a_copy_of_its_own_with_every_setting() -> None:
    original = Subscription(
        "turns", group="triage", consumer="c1", polling_interval=1000, max_records=8
    )
    prefixed = original.add_prefix("orq:")
    assert (prefixed.name, original.name) == ("orq:turns", "turns")
    assert isinstance(prefixed, Subscription)
    for slot in StreamSub.__slots__:
        assert getattr(prefixed, slot) == getattr(original, slot), slot
    prefixed.group = "other"
    assert original.group == "triage"
