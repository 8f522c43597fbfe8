"""bench/copy_vs_mdb_copy.py on small contents: it runs to the end and
prints every side of both contents with its ratio, the machine line and
the load average, and leaves the directory as it found it. (A smoke run:
the figures themselves are not judged.)"""
import os
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "copy_vs_mdb_copy.py")


def test_copy_benchmark_prints_every_side(pool_dir):
    cli = os.environ.get("PMSTORE_CLI")
    if not cli:
        pytest.skip("PMSTORE_CLI (the pmstore command) is not set")
    result = subprocess.run([sys.executable, BENCH, "--dir", pool_dir, "--pmstore", cli, "--num", "3000",
                             "--large", "2", "--repeat", "1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("small: 3000 keys") for line in lines), result.stdout
    assert any(line.startswith("large: 2 keys") for line in lines), result.stdout
    for side in ("pmstore copy", "mdb_copy", "mdb_copy -c"):
        rows = [line for line in lines if line[2:17].strip() == side and line.endswith("x")]
        assert len(rows) == 2, (side, result.stdout)
    assert "hypervisor" in result.stdout and "load average" in result.stdout
    assert os.listdir(pool_dir) == [], "the pools and environments were removed"
