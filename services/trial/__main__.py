"""``python -m services.trial``: one replica of the trial service."""

from services.registry import TOPOLOGY
from services.trial.spec import SPEC
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
