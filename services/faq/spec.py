"""The FAQ specialist: retrieval and answer."""

from services.faq.topic import FaqState
from shared.spec import Consumes, Owns, ServiceSpec

SPEC = ServiceSpec(
    name="faq",
    build="services.faq.app:build",
    consumes=(Consumes("tasks.faq", "faq"),),
    # The conversation's topic, which an elliptical follow-up ("e no sábado?") continues.
    owns=(Owns("faq", FaqState),),
    publishes=("merge", "outbound", "faq.unanswered"),
    specialist=True,
    pack=(("faq", "shared.faq.config:FaqConfig"),),
    journal="services.faq.journal:JOURNAL",
)
