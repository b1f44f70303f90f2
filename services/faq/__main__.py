"""``python -m services.faq``: one replica of the faq service."""

from services.faq.spec import SPEC
from services.registry import TOPOLOGY
from shared.process import run_service

if __name__ == "__main__":
    run_service(SPEC, TOPOLOGY)
