"""The trial-class specialist: stages, validation, booking."""

from services.trial.models import ContextState, TrialState
from shared.spec import Consumes, Owns, ServiceSpec

SPEC = ServiceSpec(
    name="trial",
    build="services.trial.app:build",
    consumes=(Consumes("tasks.trial", "trial"), Consumes("commands.trial", "trial")),
    owns=(Owns("trial", TrialState), Owns("context", ContextState)),
    publishes=("merge", "outbound", "events"),
    specialist=True,
    needs_section="trial",
    pack=(
        ("trial", "shared.trial.config:load_trial_config"),
        ("privacy", "services.trial.privacy:PrivacyConfig"),
    ),
    journal="services.trial.journal:JOURNAL",
)
