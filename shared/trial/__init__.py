"""What the trial service shares with the gateway and the scheduler: the ``trial`` pack section
(``config``), the booking store and its records (``bookings``), the classes of a range as staff
see them (``roster``) and the class days and how a date is shown (``days``).

The trial service decides (``services/trial/``); these modules only describe the classes and
keep the bookings, so the gateway can show them to staff and the scheduler can remind people
of them without importing the trial service.
"""
