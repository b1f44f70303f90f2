"""The FAQ specialist: retrieval and answer."""

from shared.spec import Consumes, ServiceSpec

SPEC = ServiceSpec(
    name="faq",
    build="services.faq.app:build",
    consumes=(Consumes("tasks.faq", "faq"),),
    publishes=("merge", "faq.unanswered"),
    specialist=True,
    pack=(("faq", "shared.faq.config:FaqConfig"),),
    journal="services.faq.journal:JOURNAL",
)
