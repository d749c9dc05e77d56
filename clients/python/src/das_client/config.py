"""Where the API key and base URL come from: the argument, the environment, or a profile file."""

from __future__ import annotations

import configparser
import os
import stat
from pathlib import Path
from typing import Optional

from .errors import ConfigError

#: `~/.config/das/credentials` (or `$XDG_CONFIG_HOME/das/credentials`), INI sections named by profile.
def default_profile_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "das" / "credentials"


def read_profile(path: Optional[Path] = None, profile: Optional[str] = None) -> dict[str, str]:
    """The `api_key` and `base_url` of a profile (`DAS_PROFILE`, else `default`); {} when the file does not exist.

    The file holds a secret, so one that others may read (any group or other permission bit) is refused.
    """
    file = Path(path or os.environ.get("DAS_CONFIG_FILE") or default_profile_file())
    try:
        mode = file.stat().st_mode
    except FileNotFoundError:
        return {}
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{file} is readable by others (mode {stat.S_IMODE(mode):04o}); it holds an API key, so it must be 0600: chmod 600 {file}"
        )
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(file, encoding="utf-8")
    except configparser.Error as error:
        raise ConfigError(f"{file} is not a profile file: {error}") from None
    name = profile or os.environ.get("DAS_PROFILE") or "default"
    if not parser.has_section(name):
        if profile or os.environ.get("DAS_PROFILE"):
            raise ConfigError(f"{file} has no profile [{name}]")
        return {}
    return {k: v.strip() for k, v in parser.items(name) if k in ("api_key", "base_url")}


def resolve(
    api_key: Optional[str], base_url: Optional[str], profile: Optional[str] = None, profile_file: Optional[Path] = None
) -> tuple[str, str]:
    """The key and URL: each from the argument, else `DAS_API_KEY` / `DAS_API_URL`, else the profile file."""
    key = api_key or os.environ.get("DAS_API_KEY")
    url = base_url or os.environ.get("DAS_API_URL")
    if not key or not url or profile or profile_file:
        stored = read_profile(profile_file, profile)
        key = key or stored.get("api_key")
        url = url or stored.get("base_url")
    if not key:
        raise ConfigError(
            f"No API key: pass api_key=, set DAS_API_KEY, or put api_key in {profile_file or default_profile_file()} (mode 0600)"
        )
    if not url:
        raise ConfigError(
            f"No service URL: pass base_url=, set DAS_API_URL, or put base_url in {profile_file or default_profile_file()}"
        )
    return key, url
