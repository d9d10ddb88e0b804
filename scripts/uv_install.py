"""Install into this interpreter's environment with uv, from the sources pip is configured with.

    python scripts/uv_install.py UV [ARG...]     # as `python -m pip install --no-compile ARG...` would

scripts/setup.sh calls it with the environment's python: uv resolves and unpacks in parallel where pip asks each
index in turn (a fresh set-up's dependencies: 7 s against 43 s on two cores, measured), from the same sources:
pip's configuration files and PIP_* variables, as `pip config list` reports them, become uv's options. A setting
uv would read otherwise, or has no option for, ends this before uv runs, saying which (exit status 1), and setup.sh
installs with pip as before; so does any failure of uv.
"""

import os
import shlex
import subprocess
import sys

# pip's setting -> uv's option, one per value (pip separates a list's values with white space)
OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
           "constraint": "--constraints", "trusted-host": "--allow-insecure-host"}
# pip's setting -> the variable uv reads for it
VARIABLES = {"cert": "SSL_CERT_FILE", "client-cert": "SSL_CLIENT_CERT", "default-timeout": "UV_HTTP_TIMEOUT",
             "timeout": "UV_HTTP_TIMEOUT", "proxy": "HTTPS_PROXY"}
# pip's yes-or-no setting -> uv's flag
FLAGS = {"no-index": "--no-index", "pre": "--prerelease=allow"}
# what only changes how pip speaks or caches, or what an install into this environment never uses (config-file: which
# file pip read these settings from)
IDLE = {"config-file", "disable-pip-version-check", "no-color", "progress-bar", "quiet", "verbose", "no-input",
        "retries", "root-user-action", "no-warn-script-location", "require-virtualenv", "cache-dir", "no-cache-dir",
        "compile", "no-compile", "break-system-packages"}
YES = {"1", "true", "yes", "on"}


def pip_settings(python):
    """{setting: value} of pip's configuration, as `python -m pip config list` prints it (`variant.name='value'`,
    the PIP_* variables as `:env:.name`): a variable over the files, as pip reads them."""
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True)
    if listed.returncode != 0:
        raise SystemExit(f"`pip config list` failed, so pip's sources are unknown: {listed.stderr.strip()[-300:]}")
    files, variables = {}, {}
    for line in listed.stdout.splitlines():
        key, _, value = line.partition("=")
        where, _, name = key.rpartition(".")
        (variables if where == ":env:" else files)[name] = " ".join(shlex.split(value))
    return {**files, **variables}


def translated(settings, given):
    """(uv's options, {variable: value}) for pip's `settings`; (None, name) where the setting `name` has no
    translation. An option the caller gives (`given`, e.g. --index-url) replaces the configured one, as pip's command
    line does."""
    options, variables = [], {}
    for name, value in settings.items():
        if name in IDLE:
            continue
        if name in OPTIONS:
            if name == "index-url" and "--index-url" in given:
                continue
            for one in value.split():
                options += [OPTIONS[name], one]
        elif name in VARIABLES:
            variables[VARIABLES[name]] = value
        elif name in FLAGS:
            options += [FLAGS[name]] if value.lower() in YES else []
        else:
            return None, name
    return options, variables


def main(argv):
    uv, given = argv[0], argv[1:]
    options, found = translated(pip_settings(sys.executable), set(given))  # found: uv's variables, or the setting
    if options is None:
        print(f"pip's configuration holds {found!r}, a setting uv would not honour the same way", file=sys.stderr)
        return 1
    # --index-strategy unsafe-best-match: the newest release any index offers, as pip chooses
    command = [uv, "pip", "install", "--python", sys.executable, "--index-strategy", "unsafe-best-match", *options,
               *given]
    return subprocess.run(command, env={**os.environ, **found}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
