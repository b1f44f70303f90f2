"""``python -m services.triage``: one replica of the triage service."""

from services.triage.app import build
from shared.service import run_service

if __name__ == "__main__":
    run_service("triage", build)
