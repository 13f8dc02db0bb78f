# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the Python binding tests (bindings/python/run_tests.sh sets the environment):
SCENECRDT_CLI is the `scenecrdt` binary, SCENECRDT_URL a running `scenecrdt serve`."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("SCENECRDT_CLI")
    if not path:
        pytest.skip("SCENECRDT_CLI is not set (bindings/python/run_tests.sh sets it)")
    return path


@pytest.fixture(scope="session")
def server_url():
    url = os.environ.get("SCENECRDT_URL")
    if not url:
        pytest.skip("SCENECRDT_URL is not set (bindings/python/run_tests.sh starts a server)")
    return url


@pytest.fixture
def run_cli(cli):
    def run(*args, stdin=None):
        return subprocess.run([cli, *args], input=stdin, capture_output=True, check=True).stdout
    return run
