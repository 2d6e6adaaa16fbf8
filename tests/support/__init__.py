"""Helpers the tests and the benchmarks share: boxes as processes (:mod:`.serving`), Socket.IO connections that
survive a box dying under them (:mod:`.sockets`), package files (:mod:`.packages`, :mod:`.hostile`), network
namespaces and the rooms day (:mod:`.netns`, :mod:`.boxes`, :mod:`.scenario`, :mod:`.netns_day`, :mod:`.online`)
and light spectators (:mod:`.crowd`). A benchmark imports from here and never from a test module or a conftest
(tests/test_layout.py)."""
