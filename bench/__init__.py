"""``orquestra bench``: the whole system under load, next to the floors it cannot beat.

The pure parts (conversation scripts, statistics, the report) are separate modules from the
parts that start processes and drive traffic, so they can be tested without a system.
"""
