"""faq service shell: retrieve from the pack's knowledge base, maybe let the LLM phrase it,
compose, commit, publish. Unanswered questions are journaled for ``orquestra unanswered``."""

from __future__ import annotations

from services.faq.core import compose, people_named, retrieve, student_age
from services.faq.llm import FaqLLMAnswer, accept_llm_answer, build_llm_messages
from services.faq.topic import FaqState, current_topic, current_unknown, remember
from shared.contracts import SpecialistTask, Unanswered
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.service import Runtime, TurnDecision, ask_llm, on_tasks
from shared.state import Snapshot


def build(rt: Runtime) -> None:
    config = rt.pack.section("faq", FaqConfig)
    index = FaqIndex(config)
    use_llm = rt.settings.nlu_mode != "rules"

    async def decide(task: SpecialistTask, snapshot: Snapshot, decision: TurnDecision) -> None:
        turn = task.turn
        mode = snapshot.mode()
        booking = config.booking_context
        context = booking.tags_for(snapshot.trial()) if booking else []
        state = snapshot.model("faq", FaqState)
        topic = current_topic(state, turn.now, config.follow_up)
        unknown = current_unknown(state, turn.now, config.follow_up)
        retrieval = retrieve(
            task.text,
            index=index,
            context=context,
            topic=topic,
            message=turn.text,
            now=turn.now,
            names=people_named(snapshot.memory(), turn.text),
            unknown=unknown,
        )
        llm_answer = None
        if use_llm and retrieval.entries:
            messages = build_llm_messages(
                task.text, retrieval.entries, instructions=config.llm_instructions
            )
            llm_answer = await ask_llm(
                rt,
                messages,
                FaqLLMAnswer,
                turn_id=turn.turn_id,
                purpose="faq",
                journal=decision.journal,
            )
            if llm_answer and not accept_llm_answer(llm_answer, retrieval.entry_ids):
                llm_answer = None
        result = compose(
            retrieval,
            mode=mode,
            config=config,
            texts=rt.pack,
            seed=turn.turn_id,
            llm_answer=llm_answer,
            student_age=student_age(snapshot.memory(), turn.text),
            offer_booking=booking.offers_booking(snapshot.trial()) if booking else True,
        )
        decision.reply(
            result.text,
            asks_question=result.asks_question,
            data={
                "entry_ids": result.entry_ids,
                "unanswered": result.unanswered,
                "unknown_only": result.unknown_only,
            },
        )
        decision.writes["faq"] = remember(state, retrieval.answered, turn.now, retrieval.unanswered)
        for question in result.unanswered:
            record = Unanswered(
                question=question,
                conversation_id=turn.conversation_id,
                turn_id=turn.turn_id,
                at=turn.now,
            )
            decision.outbox.add(rt.keys.unanswered, record)
        decision.record(
            "faq.answered",
            entry_ids=result.entry_ids,
            scores=result.scores,
            source=result.source,
            unanswered=result.unanswered,
            oferta_pointer=result.oferta_pointer,
            topic=topic.entry_id if topic else None,
            inherited=[c.clause for c in retrieval.clauses if c.inherited],
            ages=retrieval.ages,
        )

    on_tasks(rt, decide)
