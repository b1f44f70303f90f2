"""The enrollment specialist: a plan, days and time, a way to pay, then a request for staff."""

from services.enrollment.core import EnrollmentState
from shared.spec import Consumes, Owns, ServiceSpec

SPEC = ServiceSpec(
    name="enrollment",
    build="services.enrollment.app:build",
    consumes=(Consumes("tasks.enrollment", "enrollment"),),
    owns=(Owns("enrollment", EnrollmentState),),
    publishes=("merge", "outbound", "events"),
    specialist=True,
    admin_api="services.enrollment.api:router",
    needs_section="enrollment",
    pack=(("enrollment", "services.enrollment.config:load_config"),),
    journal="services.enrollment.journal:JOURNAL",
    personal_records="services.enrollment.store:EnrollmentStore",
)
