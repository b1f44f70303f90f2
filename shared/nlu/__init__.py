"""Rules-based Portuguese understanding shared by every service (DESIGN §8, ``rules`` mode).

``normalize`` (matching form), ``yesno`` (leading yes/no), ``slots`` (name, age, level),
``dates`` (dates and times relative to ``Turn.now``), ``extract`` (all slots of one message as
``models.Slots``). Pure functions: no I/O, no wall clock.
"""
