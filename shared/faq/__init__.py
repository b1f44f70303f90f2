"""The FAQ's knowledge base: its pack section (``config``), how a message becomes the terms it
is matched on (``analysis``) and the retrieval index over its entries (``index``).

Shared because two services search the same index built from the same pack: the FAQ service
answers with it, and triage asks it whether the FAQ knows a question before routing the clause
there (``services/triage/faq_evidence.py``). Answering (``services/faq/core.py``) stays in the
FAQ service.
"""
