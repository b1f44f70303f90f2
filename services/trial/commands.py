"""Staff commands on trial bookings (shell): attendance marks and cancellations.

The gateway relays them on ``commands.trial`` (``BookingCommand``); the trial service owns the
bookings and the conversation's ``trial`` and ``context`` slices, so it applies them here. Each
command runs like a turn of its own keyed by its command id: the store's change is idempotent
by that id and ``handle_once`` commits the slices, the journal and the outbox (events, and the
customer's message on a cancellation) once, so a redelivered command repeats nothing.
"""

from __future__ import annotations

from services.trial.models import ContextState, TrialState
from services.trial.staff import (
    Event,
    attendance_event,
    cancelled_event,
    forget_booking,
    staff_cancel_text,
)
from shared.contracts import BookingCommand, DomainEvent, Reply
from shared.service import Decision, Runtime, handle_once
from shared.state import Snapshot, journal_entry
from shared.trial.bookings import BookingStore, StaffBooking
from shared.trial.config import TrialConfig


class CommandHandler:
    def __init__(self, rt: Runtime, store: BookingStore, config: TrialConfig) -> None:
        self.rt = rt
        self.store = store
        self.config = config

    async def handle(self, body: bytes) -> None:
        command = BookingCommand.model_validate_json(body)
        booking = await self.store.staff_view(command.booking_id)
        if booking is None:
            # The gateway checks existence before relaying; a forged or stale command ends here.
            self.rt.log.warning(
                "command for an unknown booking dropped",
                command_id=command.command_id,
                booking_id=command.booking_id,
            )
            return
        conversation_id = booking.conversation_id
        if conversation_id is None:
            # The person's data was erased: the booking still changes (the class's record stays
            # right), but no conversation is there to journal in, tell or follow up.
            await self._apply(command, booking, None)
            return

        async def decide(snapshot: Snapshot) -> Decision:
            return await self._apply(command, booking, snapshot)

        await handle_once(self.rt, conversation_id, command.command_id, decide)

    async def _apply(
        self, command: BookingCommand, booking: StaffBooking, snapshot: Snapshot | None
    ) -> Decision:
        decision = Decision()
        if command.action == "attendance":
            assert command.status is not None
            result = await self.store.mark_attendance(
                booking.booking_id, command.status, command_id=command.command_id, now=command.at
            )
            events = [attendance_event(booking, command.status)] if result == "marked" else []
        else:
            result = await self.store.cancel(
                booking.booking_id,
                reason=command.reason,
                idempotency_key=command.command_id,
                role="staff",
                now=command.at,
            )
            events = []
            if result == "cancelled":
                events.append(
                    cancelled_event(
                        booking_id=booking.booking_id,
                        reason=command.reason,
                        by="staff",
                        conversation_id=booking.conversation_id,
                        date=booking.date,
                        time=booking.time,
                    )
                )
                if snapshot is not None:
                    self._after_cancel(command, booking, snapshot, decision)
        for event in events:
            self._publish(decision, command, booking, event)
        decision.journal.append(
            journal_entry(
                "trial",
                command.command_id,
                f"booking.{command.action}",
                booking_id=booking.booking_id,
                status=command.status,
                reason=command.reason or None,
                by=command.by,
                result=result,
            )
        )
        self.rt.log.info(
            "booking command applied",
            command_id=command.command_id,
            action=command.action,
            booking_id=booking.booking_id,
            result=result,
        )
        return decision

    def _after_cancel(
        self, command: BookingCommand, booking: StaffBooking, snapshot: Snapshot, decision: Decision
    ) -> None:
        """The conversation forgets the class, and the customer is told through its channel."""
        state, context = forget_booking(
            snapshot.model("trial", TrialState),
            snapshot.model("context", ContextState),
            booking.booking_id,
            self.config,
        )
        if state is not None:
            decision.writes["trial"] = state
        if context is not None:
            decision.writes["context"] = context
        meta = snapshot.meta()
        channel = meta.channel if meta else None
        if not channel:
            self.rt.log.warning(
                "cancelled booking's conversation has no channel: customer not told",
                booking_id=booking.booking_id,
            )
            return
        text = staff_cancel_text(
            booking, command.reason, pack=self.rt.pack, config=self.config, seed=command.command_id
        )
        assert booking.conversation_id is not None
        decision.outbox.add(
            self.rt.keys.route(self.rt.keys.outbound, booking.conversation_id),
            Reply(
                turn_id=command.command_id,
                conversation_id=booking.conversation_id,
                channel=channel,
                to=meta.contact,
                text=text,
                bubbles=[text],
                # Sent as staff: whoever owns the conversation, answering no turn (egress
                # releases no lease for it) and recorded in the history as staff's.
                author="agent",
                agent="staff",
                template=meta.window_closed(command.at),
            ),
        )

    def _publish(
        self, decision: Decision, command: BookingCommand, booking: StaffBooking, event: Event
    ) -> None:
        decision.outbox.add(
            self.rt.keys.route(self.rt.keys.events, booking.conversation_id or ""),
            DomainEvent(
                type=event["type"],
                conversation_id=booking.conversation_id or "",
                turn_id=command.command_id,
                at=command.at,
                data=event["data"],
            ),
        )
