"""mode_router: the conversation's funnel mode (discovery, oferta, followup, reativacao).

A pure core in three layers (intent detector → transition proposer → transition validator) plus
bootstrap, capabilities and the decision record; ``router.decide`` and ``router.on_event`` are
the entry points a service calls. All vocabulary, matrices and timings come from the pack's
``modes`` and ``capabilities`` sections (``config.ModeRouterConfig.from_pack``).
"""
