"""A non-editable wheel carries the model specs and scenarios and runs from anywhere.

Builds the wheel, installs it (without dependencies) into a fresh virtual
environment that borrows the test environment's third-party packages, and
runs `kvplan estimate` from an unrelated directory.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    (whl,) = out.glob("kvplan-*.whl")
    return whl


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "kvplan/model_specs/index.json" in names
    assert "kvplan/model_specs/llama-3.1-70b.json" in names
    assert "kvplan/model_specs/weights.json" in names and "kvplan/weights/gguf.py" in names
    assert any(n.startswith("kvplan/scenarios/") and n.endswith(".yaml") for n in names)
    assert any(n.startswith("kvplan/kernels/") and n.endswith(".py") for n in names)
    assert not any(n.startswith("kernels/") for n in names), "no top-level 'kernels' package"
    assert not any(n.startswith("tests/") for n in names)
    # every subpackage in the tree is listed in pyproject.toml's packages
    for init in sorted((ROOT / "kvplan").rglob("__init__.py")):
        if "__pycache__" not in init.parts:
            assert str(init.relative_to(ROOT)) in names, f"{init.relative_to(ROOT).parent} missing from pyproject packages"


def test_installed_wheel_runs_from_another_directory(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    py = env_dir / "bin" / "python"
    target = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            capture_output=True, text=True, check=True).stdout.strip()
    # the wheel itself goes in the fresh environment; its dependencies come from ours
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", target, str(wheel)],
                   check=True, timeout=300)
    borrowed = [p for p in site.getsitepackages() + [sysconfig.get_paths()["purelib"]] if "site-packages" in p]
    Path(target, "borrowed.pth").write_text("\n".join(dict.fromkeys(borrowed)) + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["HF_HUB_OFFLINE"] = "1"
    proc = subprocess.run([str(py), "-m", "kvplan", "estimate", "llama-3.1-70b", "--context", "128k", "--format", "json"],
                          capture_output=True, text=True, cwd=elsewhere, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kv_bytes_per_sequence"] == 40 * 1024**3
    where = subprocess.run([str(py), "-c", "import kvplan; print(kvplan.__file__)"], capture_output=True, text=True, cwd=elsewhere, env=env)
    assert where.stdout.strip().startswith(target), where.stdout
