"""Question packages: what is asked in a battle, brought onto the box.

Three ways in, one model out (:mod:`.model`): SIGame's ``.siq`` packages (:mod:`.siq`), the «Своя игра» tours
of the question database db.chgk.info (:mod:`.chgk`), and a plain table an organiser writes in a spreadsheet
(:mod:`.table`). :func:`.formats.read_package` picks the reader by what the file holds. The files are untrusted:
every reader validates the whole file before anything is kept, and refuses with a
:class:`~appliance.packages.errors.PackageFileError` that names the element or line. :mod:`.library` keeps
imported packages in the data directory.

This area imports the standard library, ``defusedxml`` and the project's errors only; the service composes it
with the battle store (which themes were played where) and the web uploads and shows it.
"""
