"""The merger: when a turn is complete and what its reply says."""

from shared.spec import Consumes, ServiceSpec

SPEC = ServiceSpec(
    name="merger",
    build="services.merger.app:build",
    consumes=(Consumes("merge", "merger"),),
    publishes=("outbound",),
    pack=(("merger", "shared.compose:MergerConfig"),),
    journal="services.merger.journal:JOURNAL",
)
