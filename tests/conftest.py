"""Shared pytest configuration: hypothesis profiles for CI and for long local runs."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.register_profile("soak", deadline=None, max_examples=20_000)
settings.load_profile(os.environ.get("MQSPEC_HYPOTHESIS_PROFILE", "ci"))
