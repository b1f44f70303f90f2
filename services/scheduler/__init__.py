"""scheduler: messages due at a business-time instant (class reminders, follow-ups), and the
funnel's daily counters."""
