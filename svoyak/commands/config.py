"""``svoyak config``: every setting, its default and unit, and the value this process resolves."""

from __future__ import annotations

import dataclasses

from appliance import config


def add_arguments(parser) -> None:
    parser.add_argument("--defaults", action="store_true", help="list declared settings and defaults only")


def run(args) -> int:
    if args.defaults:
        print(config.describe())
        return 0
    for name, value in dataclasses.asdict(config.load()).items():
        print(f"{name} = {value}")
    return 0
