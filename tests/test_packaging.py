"""The wheel and sdist a user installs: `python -m build` makes both, the wheel carries the
package data (the report templates), and the wheel installed into a fresh virtual
environment runs `bottlenecklab list`.

How the fresh environment gets its dependencies, and why that is still an honest test:
installing torch, scipy, pyarrow, ... into a new venv would copy gigabytes (minutes on
the 2-core test machines) and needs a package index. Instead the venv is created with
`--without-pip` and *without* system site packages, `bottlenecklab` is installed into it
from the wheel alone (`pip install --no-deps --no-index`), and one `.pth` line puts the
dependencies of the test environment's site-packages on its path. A `.pth` path line is
not a site directory: the `.pth` files inside it (the editable install of this checkout)
are not processed, so the only `bottlenecklab` the venv can import is the wheel's. The
test checks that (`__file__` inside the venv, run from an empty folder with no
`PYTHONPATH`), and that every requirement the wheel declares is met there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

import bottlenecklab
from bottlenecklab.experiments import EXPERIMENTS

pytest.importorskip("build")
pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[1]
NAME = f"bottlenecklab-{bottlenecklab.__version__}"


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """`python -m build` (sdist, then the wheel built from the sdist), offline, on a copy of
    the project's files (the build writes `src/*.egg-info`, which must not land in the
    checkout)."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md", "MANIFEST.in", "constraints.txt"):
        shutil.copy2(ROOT / name, tree / name)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "src", tree / "src", ignore=skip)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out)], cwd=tree)
    return out


@pytest.fixture(scope="module")
def env(dist, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel (see the module docstring for its dependencies)."""
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False, system_site_packages=False, symlinks=True).create(root)
    python = root / "bin" / "python"
    wheel = dist / f"{NAME}-py3-none-any.whl"
    # The wheel first: once the .pth is there, pip would see the test environment's
    # `bottlenecklab` as installed already.
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
          "--no-deps", "--no-index", "--ignore-installed", str(wheel)],
         cwd=root, env=_clean_env())  # fmt: skip
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(_run([str(python), "-c", purelib]).stdout.strip())
    assert (site / "bottlenecklab" / "__init__.py").is_file(), sorted(site.iterdir())
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "_test_dependencies.pth").write_text("".join(f"{d}\n" for d in deps))
    return root


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def test_the_wheel_and_sdist_carry_the_package_data(dist):
    with zipfile.ZipFile(dist / f"{NAME}-py3-none-any.whl") as whl:
        names = set(whl.namelist())
        entry_points = whl.read(f"{NAME}.dist-info/entry_points.txt").decode()
        metadata = whl.read(f"{NAME}.dist-info/METADATA").decode()
    assert "bottlenecklab/report/templates/report.html" in names
    assert "bottlenecklab = bottlenecklab.cli:main" in entry_points
    assert f"Version: {bottlenecklab.__version__}\n" in metadata
    templates = sorted(ROOT.glob("src/bottlenecklab/report/templates/*.html"))
    assert templates
    for t in templates:
        assert f"bottlenecklab/report/templates/{t.name}" in names
    with tarfile.open(dist / f"{NAME}.tar.gz") as sdist:
        members = set(sdist.getnames())
    assert f"{NAME}/src/bottlenecklab/report/templates/report.html" in members
    assert {f"{NAME}/pyproject.toml", f"{NAME}/README.md", f"{NAME}/CHANGELOG.md"} <= members


def test_the_installed_wheel_runs_bottlenecklab_list(env, tmp_path):
    cwd = tmp_path / "elsewhere"  # no src/ next to it
    cwd.mkdir()
    python = env / "bin" / "python"
    probe = _run(
        [str(python), "-c",
         "import bottlenecklab, importlib.resources as r; print(bottlenecklab.__file__); "
         "print(bottlenecklab.__version__); "
         "print(r.files('bottlenecklab.report').joinpath('templates/report.html').is_file())"],
        cwd=cwd, env=_clean_env(),
    )  # fmt: skip
    where, version, template = probe.stdout.split()
    assert Path(where).is_relative_to(env), where
    assert version == bottlenecklab.__version__ and template == "True"

    listed = _run([str(env / "bin" / "bottlenecklab"), "list"], cwd=cwd, env=_clean_env())
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert names == sorted(EXPERIMENTS)


def test_the_wheels_requirements_are_met_in_the_venv(env):
    check = (
        "import importlib.metadata as m\n"
        "from packaging.requirements import Requirement\n"
        "for text in m.requires('bottlenecklab') or []:\n"
        "    req = Requirement(text)\n"
        "    if req.marker and not req.marker.evaluate({'extra': ''}):\n"
        "        continue\n"
        "    have = m.version(req.name)\n"
        "    assert req.specifier.contains(have, prereleases=True), (text, have)\n"
        "    print(req.name, have)\n"
    )
    out = _run([str(env / "bin" / "python"), "-c", check], env=_clean_env())
    assert "torch" in out.stdout.split()
