"""The outermost layer: the ``svoyak`` command (:mod:`svoyak.cli`) and its subcommands (:mod:`svoyak.commands`).

It composes the others and nothing imports it (tests/test_layout.py): ``web`` and ``gpio`` sit inside it, the
appliance's service, store and rules inside them.
"""
