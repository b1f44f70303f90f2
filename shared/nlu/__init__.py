"""Rules-based Portuguese understanding shared by every service (``rules`` mode).

``normalize`` (matching form, chat spellings), ``fuzzy`` (typos corrected to a pack's
vocabulary), ``lexicon`` (common words: never names, never typos), ``numbers`` (number words,
text2num), ``yesno`` (leading yes/no), ``slots`` (name, who is booked, age, level), ``dates``
(dates and times relative to ``Turn.now``, hours read against valid slots), ``extract`` (all
slots of one message as ``models.Slots``). Pure functions: no I/O, no wall clock.
"""
