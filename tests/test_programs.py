"""Every program a test, a benchmark or a script calls is installed by `./dev` itself.

A clean clone on a developer's machine is not a fresh machine: what was installed by hand is still there. Once
`sfdisk` was called by a test that `./dev test` never installed, and the suite failed on a fresh Debian while CI
was green. This test holds the two lists together: the programs the code calls (found in the source, not by
running it) and the Debian packages `./dev` installs for the command that runs that code.

How a program is found: in Python, the first argument of `shutil.which(...)` and of the project's own small
wrappers, and the first word of a subprocess argv written as a literal; in shell scripts, the first word of each
command. How it is matched: `dpkg -S` names the package that owns the program on this machine (`./dev test` has
run its installs before pytest starts), and that package must be in the list `./dev` installs for that command,
or be one every Debian system has (priority "required").
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Which `./dev` command runs which code: its programs must come from that command's need_debs (plus the ones
# every command shares through setup_venv).
PYTHON_CODE = {"test": ("tests", "appliance", "gpio", "svoyak", "web"), "bench": ("bench",)}
HOST_SCRIPTS = {
    "test": (".ci/run", "image/release.sh"),  # release.sh: the image's fast checks make a small release
    "image": ("image/image.sh", "image/image-test.sh", "image/bundle.sh", "image/add-data-partition.sh",
              "image/release.sh"),
    "fresh-check": ("tests/fresh-machine.sh",),
}
# Scripts that run inside the image's root (a chroot or the booted box): their programs are the image's own
# packages, listed in install-box.sh, not this machine's.
TARGET_SIDE = ("image/install-box.sh", "image/pi-gen/")
# Calls that take a program name as their first argument, besides subprocess's own.
WHICH_CALLS = {"which", "tool"}
SUBPROCESS_CALLS = {"run", "Popen", "check_output", "check_call", "call"}
# Words that run the command after them.
COMMAND_PREFIXES = {"sudo", "as_root", "exec", "env", "nice", "timeout", "command", "nohup"}
# Shell words that are not programs on PATH.
SHELL_WORDS = set("""
    if then else elif fi for in do done while until case esac function return local export set shift exit
    exec eval trap wait read echo printf cd test true false break continue source declare readonly unset
    command type hash kill pwd umask ulimit getopts select time let printf alias [ [[ ] ]] { } ! : .
""".split())


@functools.cache
def dev_packages() -> dict[str, set[str]]:
    """The Debian packages `./dev` installs, per command (`test`, `bench`, `image`, `run`)."""
    text = (ROOT / "dev").read_text(encoding="utf-8").replace("\\\n", " ")

    def need_debs(block: str) -> set[str]:
        return {word for line in re.findall(r"need_debs ([^\n;|&]+)", block) for word in line.split()
                if re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", word)}

    shared = need_debs(re.search(r"setup_venv\(\) \{.*?\n\}", text, re.S).group(0))
    packages = {}
    for labels, block in re.findall(r"\n\s+([a-z|-]+)\)\n(.*?);;", text, re.S):
        for label in labels.split("|"):
            packages[label] = need_debs(block) | (shared if "setup_venv" in block else set())
    return packages


def python_programs(path: Path) -> set[str]:
    """Program names a Python file hands to `which`-like calls or puts first in a literal subprocess argv.

    Besides `subprocess.run(...)` and friends, a function of the file's own that calls subprocess (a `run(*argv)`
    wrapper) counts as a subprocess call.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def is_subprocess_call(node: ast.Call) -> bool:
        return (isinstance(node.func, ast.Attribute) and node.func.attr in SUBPROCESS_CALLS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess")

    wrappers = {function.name for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
                and any(isinstance(node, ast.Call) and is_subprocess_call(node) for node in ast.walk(function))}
    programs = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        first = node.args[0]
        if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
            first = first.elts[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        if name in WHICH_CALLS or is_subprocess_call(node) or (isinstance(node.func, ast.Name) and name in wrappers):
            if re.fullmatch(r"[A-Za-z0-9_.+/-]+", first.value) and not first.value.startswith(("-", ".")):
                programs.add(Path(first.value).name)
    return programs - {Path(sys.executable).name, "python3", "python"}


def shell_words(path: Path) -> set[str]:
    """The first word of each command in a shell script, commands inside ``$(...)`` included.

    A tokenizer that knows shell quoting (shlex, POSIX mode) reads the script; heredoc bodies are data and are
    dropped first. Functions the script defines and shell keywords and builtins are not programs.
    """
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"<<-?\s*'?(\w+)'?([^\n]*)\n.*?\n\s*\1\n", r"\2\n", text, flags=re.S)  # heredoc bodies
    text = text.replace("\\\n", " ")
    # Arithmetic: its words are variables; a command substituted inside it is still a command.
    text = re.sub(r"\$\(\((?:(?!\$\().)*?\)\)", "0", text)
    text = text.replace("$((", "$(").replace("))", ")")
    defined = set(re.findall(r"^\s*([A-Za-z_][\w-]*)\s*\(\)", text, re.M))
    # `for tool in a b c; do command -v "$tool"` checks programs by name.
    named = {word for words in re.findall(r"for \w+ in ([^;\n]+); do command -v", text) for word in words.split()}
    return (named | _first_words(text)) - SHELL_WORDS - defined


def _first_words(text: str) -> set[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    found, at_start = set(), True
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: the script's own shellcheck test says where
        return set()
    for token in tokens:
        for inner in _substitutions(token):
            found |= _first_words(inner)
        if token in ("{", "}") or (token and set(token) <= set(";&|()<>\n")):
            at_start = True
        elif at_start:
            if re.fullmatch(r"[A-Za-z_]\w*=.*", token, re.S) or token in COMMAND_PREFIXES:
                continue  # VAR=value before a command, or a wrapper: the command is the next word
            at_start = token in ("then", "do", "else", "elif", "if", "while", "until", "!", "time")
            word = Path(token).name if token.startswith(("/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/")) else token
            if re.fullmatch(r"[a-z][a-z0-9._+-]*", word):
                found.add(word)
            if token == "chroot":
                at_start = False  # what runs in a chroot is the target's
    return found


def _substitutions(token: str) -> list[str]:
    """The commands inside ``$( ... )`` in a word (nested ones are found by the recursive parse)."""
    inner, index = [], token.find("$(")
    while index != -1:
        depth, end = 0, index + 1
        for end in range(index + 1, len(token)):
            depth += {"(": 1, ")": -1}.get(token[end], 0)
            if depth == 0:
                break
        inner.append(token[index + 2:end])
        index = token.find("$(", end)
    return inner


def shell_programs(path: Path) -> set[str]:
    """The words of :func:`shell_words` that name a program here.

    The parse is a heuristic, so a word that names no program (a variable's name in an odd place) is dropped. A
    real program that is missing fails in the script's own test or run, which is where that failure belongs.
    """
    return {word for word in shell_words(path) if owning_package(word) is not None}


@functools.cache
def required_packages() -> frozenset[str]:
    """Packages every Debian system has: priority required (coreutils, util-linux, dpkg, bash, ...)."""
    listing = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Priority} ${Essential}\n"],
                             capture_output=True, text=True, check=True).stdout
    rows = (line.split(" ") for line in listing.splitlines())
    return frozenset(row[0] for row in rows if len(row) == 3 and (row[1] == "required" or row[2] == "yes"))


@functools.cache
def owning_package(program: str) -> str | None:
    """The Debian package that installed `program` on this machine, or None (not installed, or not Debian's)."""
    found = shutil.which(program, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
    if found is None:
        return None
    # usrmerge: dpkg may know the file by its /bin name, an alternative by the file it points to.
    candidates = dict.fromkeys([found, os.path.realpath(found),
                                *(f"{folder}/{program}" for folder in ("/usr/bin", "/usr/sbin", "/bin", "/sbin"))])
    result = subprocess.run(["dpkg", "-S", *candidates], capture_output=True, text=True, check=False)
    for line in result.stdout.splitlines():
        if ": " in line and not line.startswith("diversion"):
            return line.split(": ")[0].split(",")[0].strip()
    return ""  # on PATH but no Debian package owns it: the venv (pip) or a hand install


def in_the_venv(program: str) -> bool:
    return (Path(sys.executable).parent / program).exists()


def calls_by_command() -> dict[str, dict[str, set[str]]]:
    """{dev command: {program: {files that call it}}}."""
    calls: dict[str, dict[str, set[str]]] = {}
    for command, folders in PYTHON_CODE.items():
        for folder in folders:
            for path in sorted((ROOT / folder).rglob("*.py")):
                for program in python_programs(path):
                    calls.setdefault(command, {}).setdefault(program, set()).add(str(path.relative_to(ROOT)))
    for command, scripts in HOST_SCRIPTS.items():
        for script in scripts:
            path = ROOT / script
            if path.exists():
                for program in shell_programs(path):
                    calls.setdefault(command, {}).setdefault(program, set()).add(script)
    return calls


def test_the_scan_finds_the_programs_we_know_the_tests_call():
    """The scan itself works: it sees programs called each way the code calls them."""
    python = set().union(*(python_programs(path) for path in (ROOT / "tests").rglob("*.py")))
    assert {"sfdisk", "mkfs.ext4", "debugfs", "nmcli", "dnsmasq", "chromium", "systemd-analyze", "shellcheck",
            "git", "bash", "systemd-sysusers", "udevadm"} <= python
    shell = set().union(*(shell_words(ROOT / script) for script in HOST_SCRIPTS["image"]))
    assert {"mmdebstrap", "qemu-system-aarch64", "curl", "sfdisk", "arch-test", "awk", "tail"} <= shell
    assert not {"size", "root_mb", "print", "import", "board", "host"} & shell  # data, not commands
    assert dev_packages()["test"] >= {"chromium", "fdisk", "shellcheck", "python3-venv"}


def test_no_target_side_script_is_scanned_as_a_host_script():
    host = [script for scripts in HOST_SCRIPTS.values() for script in scripts]
    assert not [script for script in host if script.startswith(TARGET_SIDE)]


def not_installed_by_dev(command: str, installed_by_dev: set[str]) -> list[str]:
    """What `command`'s code calls that neither `installed_by_dev` nor every Debian system provides."""
    missing = []
    for program, files in sorted(calls_by_command().get(command, {}).items()):
        if in_the_venv(program):
            continue  # a console script of a pinned Python dependency
        where = ", ".join(sorted(files))
        package = owning_package(program)
        if package is None:
            missing.append(f"{program} (called in {where}) is not installed at all")
        elif package == "":
            missing.append(f"{program} (called in {where}) is on PATH but no Debian package owns it: installed by hand?")
        elif package not in installed_by_dev and package not in required_packages():
            missing.append(f"{program} (called in {where}) comes from the Debian package {package}, "
                           f"which ./dev {command} does not install")
    return missing


needs_dpkg = pytest.mark.skipif(shutil.which("dpkg") is None, reason="needs a Debian system (dpkg) to name packages")


@needs_dpkg
@pytest.mark.parametrize("command", sorted(set(PYTHON_CODE) | set(HOST_SCRIPTS)))
def test_every_program_called_is_installed_by_dev(command):
    assert not_installed_by_dev(command, dev_packages()[command]) == []


@needs_dpkg
def test_a_package_missing_from_dev_is_named_with_its_callers():
    """The failure this test exists for: sfdisk called by the image tests, fdisk not in ./dev test's list."""
    missing = not_installed_by_dev("test", dev_packages()["test"] - {"fdisk"})
    assert [line for line in missing if line.startswith("sfdisk ")] == [
        "sfdisk (called in tests/image/test_add_data_partition.py, tests/image/test_cardboot.py, tests/image/test_refresh.py) comes from the "
        "Debian package fdisk, "
        "which ./dev test does not install"]
