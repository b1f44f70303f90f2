"""The mode router: funnel mode transitions."""

from services.mode_router.state import ModeState
from shared.spec import Consumes, Owns, ServiceSpec

SPEC = ServiceSpec(
    name="mode_router",
    build="services.mode_router.app:build",
    consumes=(Consumes("turns", "mode_router"), Consumes("events", "mode_router")),
    owns=(Owns("mode", ModeState),),
    publishes=(
        "merge",
        "outbound",
    ),
    pack=(
        ("modes", "services.mode_router.config:ModeRouterConfig.from_pack"),
        ("capabilities", "shared.capabilities:CapabilitiesConfig"),
    ),
    journal="services.mode_router.journal:JOURNAL",
)
