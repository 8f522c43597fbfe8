"""Fixtures for the pmstore module's tests: a fresh pool path on tmpfs, and
a helper that runs a Python snippet in a child interpreter."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest


@pytest.fixture
def pool_dir():
    path = tempfile.mkdtemp(prefix="pmstore-py-", dir="/dev/shm")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def pool(pool_dir):
    return os.path.join(pool_dir, "pool")


@pytest.fixture
def small():
    """Open arguments for a small pool."""
    return {"initial_size": 8 << 20, "max_size": 64 << 20}


@pytest.fixture
def run_python():
    """run_python(code, *args): runs `code` in a fresh interpreter (this one,
    with this sys.path) and returns the CompletedProcess, text output."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))

    def run(code, *args, timeout=60):
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                              capture_output=True, text=True, timeout=timeout)
    return run
