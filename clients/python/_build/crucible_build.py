"""An in-tree PEP 517 build backend for crucible-client, with no build requirements.

``pip install ./clients/python`` builds the package in an isolated environment. With a
backend such as setuptools that environment first needs the backend downloaded from a
package index, so the install fails on a machine without one. This module is the backend
instead (``[build-system] requires = []``, ``backend-path = ["_build"]``): it writes the
wheel and the sdist with the standard library only, so the build needs nothing but the
Python that runs pip.

What it reads: the ``[project]`` table of ``pyproject.toml`` (name, version, description,
readme, requires-python, dependencies, optional-dependencies, classifiers) and the
package directory named by ``[tool.crucible-build] packages``. What it writes:

- a pure-Python wheel ``{name}-{version}-py3-none-any.whl`` with the package's files,
  ``METADATA`` (core metadata 2.1), ``WHEEL``, ``top_level.txt`` and ``RECORD`` (sha256,
  urlsafe base64 without padding, as the wheel spec wants);
- an sdist ``{name}-{version}.tar.gz`` with ``PKG-INFO``, ``pyproject.toml``, the readme,
  the package and this backend (so a wheel can be built from the sdist the same way);
- an editable wheel (PEP 660) holding a ``.pth`` file that puts the source directory on
  ``sys.path``.

Hooks: ``build_wheel``, ``build_sdist``, ``build_editable``, ``get_requires_for_build_*``
(all empty), ``prepare_metadata_for_build_wheel`` and ``..._editable``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Any, Dict, List, Mapping, Optional, Tuple

__all__ = [
    "build_wheel",
    "build_sdist",
    "build_editable",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
]

# Files in the archives get this time (1980-01-01, the zip epoch) so builds are reproducible.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_SKIP_DIRS = ("__pycache__",)
_SKIP_SUFFIXES = (".pyc", ".pyo")


def _root() -> str:
    """The project directory: pip runs the hooks with it as the working directory."""
    return os.getcwd()


# --- pyproject.toml --------------------------------------------------------------------------


def _load_toml(text: str) -> Dict[str, Any]:
    try:
        import tomllib  # Python >= 3.11
    except ImportError:
        return _parse_toml_subset(text)
    return tomllib.loads(text)


def _parse_toml_subset(text: str) -> Dict[str, Any]:
    """The TOML this project's pyproject.toml uses, for Pythons without tomllib (< 3.11):
    ``[table]`` / ``[a.b]`` headers, ``key = "string"``, ``key = ["strings", ...]`` (over
    several lines) and ``key = true/false``. Anything else is an error naming the line, not
    a guess."""
    doc: Dict[str, Any] = {}
    table = doc
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = _strip_comment(lines[i])
        i += 1
        if not line:
            continue
        m = re.fullmatch(r"\[([A-Za-z0-9_.\-\"]+)\]", line)
        if m:
            table = doc
            for part in m.group(1).split("."):
                table = table.setdefault(part.strip('"'), {})
            continue
        m = re.fullmatch(r'("?[A-Za-z0-9_\-]+"?)\s*=\s*(.*)', line)
        if not m:
            raise ValueError("pyproject.toml line %d: cannot read %r without tomllib" % (i, line))
        key, value = m.group(1).strip('"'), m.group(2).strip()
        if value.startswith("[") and not value.endswith("]"):
            while i < len(lines) and not value.rstrip().endswith("]"):
                value += " " + _strip_comment(lines[i])
                i += 1
        table[key] = _toml_value(value, i)
    return doc


def _strip_comment(line: str) -> str:
    """The line without its ``#`` comment (a ``#`` inside a basic string is kept), stripped."""
    quoted = False
    for j, ch in enumerate(line):
        if ch == '"' and (j == 0 or line[j - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:j].strip()
    return line.strip()


def _toml_value(value: str, lineno: int) -> Any:
    if value in ("true", "false"):
        return value == "true"
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        return value[1:-1]
    if value.startswith("[") and value.endswith("]"):
        items = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
        return items
    raise ValueError("pyproject.toml line %d: unsupported value %r without tomllib" % (lineno, value))


class _Project:
    """What the backend needs from pyproject.toml, checked."""

    def __init__(self, root: str):
        path = os.path.join(root, "pyproject.toml")
        with open(path, encoding="utf-8") as f:
            doc = _load_toml(f.read())
        project = doc.get("project")
        if not isinstance(project, dict):
            raise ValueError("%s has no [project] table" % path)
        self.root = root
        self.name: str = self._need(project, "name")
        self.version: str = self._need(project, "version")
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)*([abc]|rc|\.dev|\.post)?[0-9]*", self.version):
            raise ValueError("pyproject.toml: version %r is not a plain release number" % self.version)
        self.description: str = project.get("description", "")
        self.readme: Optional[str] = project.get("readme")
        self.requires_python: Optional[str] = project.get("requires-python")
        self.dependencies: List[str] = list(project.get("dependencies", []))
        self.extras: Dict[str, List[str]] = dict(project.get("optional-dependencies", {}))
        self.classifiers: List[str] = list(project.get("classifiers", []))
        tool = doc.get("tool", {}).get("crucible-build", {})
        self.packages: List[str] = list(tool.get("packages", []))
        if not self.packages:
            raise ValueError("pyproject.toml: [tool.crucible-build] packages lists no package")
        for pkg in self.packages:
            if not os.path.isfile(os.path.join(root, pkg, "__init__.py")):
                raise ValueError("pyproject.toml: package %r has no %s/__init__.py" % (pkg, pkg))
        # Wheel and sdist file names use the normalized name (PEP 427, PEP 625).
        self.dist = re.sub(r"[-_.]+", "_", self.name).lower()

    @staticmethod
    def _need(project: Mapping[str, Any], key: str) -> str:
        value = project.get(key)
        if not isinstance(value, str) or not value:
            raise ValueError("pyproject.toml: [project] needs a %r string" % key)
        return value

    @property
    def dist_info(self) -> str:
        return "%s-%s.dist-info" % (self.dist, self.version)

    @property
    def wheel_name(self) -> str:
        return "%s-%s-py3-none-any.whl" % (self.dist, self.version)

    def metadata(self) -> str:
        """Core metadata 2.1 (METADATA in a wheel, PKG-INFO in an sdist)."""
        out = ["Metadata-Version: 2.1", "Name: " + self.name, "Version: " + self.version]
        if self.description:
            out.append("Summary: " + self.description)
        if self.requires_python:
            out.append("Requires-Python: " + self.requires_python)
        out += ["Classifier: " + c for c in self.classifiers]
        out += ["Requires-Dist: " + d for d in self.dependencies]
        for extra, deps in sorted(self.extras.items()):
            out.append("Provides-Extra: " + extra)
            out += ['Requires-Dist: %s; extra == "%s"' % (d, extra) for d in deps]
        body = ""
        if self.readme:
            with open(os.path.join(self.root, self.readme), encoding="utf-8") as f:
                body = f.read()
            kind = "text/markdown" if self.readme.endswith(".md") else "text/plain"
            out.append("Description-Content-Type: " + kind)
        text = "\n".join(out) + "\n"
        return text + ("\n" + body if body else "")

    def package_files(self) -> List[Tuple[str, str]]:
        """(path in the archive, path on disk) of every package file, sorted."""
        files = []
        for pkg in self.packages:
            top = os.path.join(self.root, pkg)
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
                for fn in sorted(filenames):
                    if fn.endswith(_SKIP_SUFFIXES):
                        continue
                    disk = os.path.join(dirpath, fn)
                    files.append((os.path.relpath(disk, self.root).replace(os.sep, "/"), disk))
        return files


# --- wheels ------------------------------------------------------------------------------------


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _dist_info_files(p: _Project) -> List[Tuple[str, bytes]]:
    wheel = "Wheel-Version: 1.0\nGenerator: crucible_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    top = "".join(pkg + "\n" for pkg in p.packages)
    return [
        (p.dist_info + "/METADATA", p.metadata().encode("utf-8")),
        (p.dist_info + "/WHEEL", wheel.encode("utf-8")),
        (p.dist_info + "/top_level.txt", top.encode("utf-8")),
    ]


def _write_wheel(p: _Project, directory: str, files: List[Tuple[str, bytes]]) -> str:
    """A wheel of ``files`` (archive path, content) plus the dist-info and its RECORD."""
    files = files + _dist_info_files(p)
    record = [f"{name},{_record_hash(data)},{len(data)}" for name, data in files]
    record.append(p.dist_info + "/RECORD,,")
    files.append((p.dist_info + "/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, p.wheel_name)
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, path)
    return p.wheel_name


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    """PEP 517: write the wheel into ``wheel_directory``; return its file name."""
    p = _Project(_root())
    return _write_wheel(p, wheel_directory, [(arc, _read(disk)) for arc, disk in p.package_files()])


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel whose ``.pth`` file puts the source directory on ``sys.path``, so
    edits to the package take effect without reinstalling."""
    p = _Project(_root())
    pth = ("__editable__.%s-%s.pth" % (p.dist, p.version), (os.path.abspath(p.root) + "\n").encode("utf-8"))
    return _write_wheel(p, wheel_directory, [pth])


def _prepare_metadata(metadata_directory: str) -> str:
    p = _Project(_root())
    for name, data in _dist_info_files(p):
        path = os.path.join(metadata_directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return p.dist_info


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[Dict[str, Any]] = None) -> str:
    """PEP 517: write ``{dist}-{version}.dist-info`` into ``metadata_directory``."""
    return _prepare_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: Optional[Dict[str, Any]] = None) -> str:
    """PEP 660: the same metadata as the wheel's."""
    return _prepare_metadata(metadata_directory)


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """PEP 517: nothing beyond the standard library."""
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """PEP 517: nothing beyond the standard library."""
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """PEP 660: nothing beyond the standard library."""
    return []


# --- sdists ------------------------------------------------------------------------------------


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """PEP 517: write ``{dist}-{version}.tar.gz`` into ``sdist_directory``; return its name.
    It holds PKG-INFO, pyproject.toml, the readme, the packages and this backend."""
    p = _Project(_root())
    base = "%s-%s" % (p.dist, p.version)
    here = os.path.abspath(__file__)
    members: List[Tuple[str, bytes]] = [("PKG-INFO", p.metadata().encode("utf-8")),
                                        ("pyproject.toml", _read(os.path.join(p.root, "pyproject.toml")))]
    if p.readme:
        members.append((p.readme, _read(os.path.join(p.root, p.readme))))
    members += [(arc, _read(disk)) for arc, disk in p.package_files()]
    members.append((os.path.relpath(here, os.path.abspath(p.root)).replace(os.sep, "/"), _read(here)))
    os.makedirs(sdist_directory, exist_ok=True)
    name = base + ".tar.gz"
    path = os.path.join(sdist_directory, name)
    tmp = path + ".part"
    with tarfile.open(tmp, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arc, data in members:
            info = tarfile.TarInfo(base + "/" + arc)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 315532800  # 1980-01-01, as in the wheel
            tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, path)
    return name
