"""One local Ray instance for all the Ray tests (starting one takes seconds)."""

from __future__ import annotations

import pytest

# Every Ray test runs in the same pytest-xdist worker (with --dist loadgroup), so one instance serves them.
RAY_GROUP = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="session")
def ray_instance():
    """A local Ray with two CPUs; the tests that use it skip where Ray is not installed."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'toolbench-gym[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 2**20)
    yield ray
    ray.shutdown()
