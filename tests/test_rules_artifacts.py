"""Rules judge: what counts as a concrete artifact for evidence
(evalkit/judges/rules/artifacts.py)."""

from __future__ import annotations

import pytest

from tests.rules_cases import det, one


@pytest.mark.parametrize(
    "line",
    [
        "kworkerd runs from /var/tmp/.cache/kworkerd",
        "kworkerd reads ~/.config/x.json",
        "kworkerd talks to 198.51.100.77",
        "kworkerd sha256 edaa1ad700c290728c18654e207a1758c29c74741d646d03cf733a39de145784",
        "kworkerd sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "kworkerd md5 d41d8cd98f00b204e9800998ecf8427e",
        "Apr 11 03:18:02 web-01 systemd[1]: Started kworkerd",
        "`2026-04-11T03:18:02Z kworkerd started`",
        "kworkerd reads `donate-level=0`",
        "kworkerd survives because of `PermitRootLogin yes`",
        "kworkerd has PID 4127",
        "kworkerd (pid=4127)",
        "kworkerd connects to port 3333",
        "kworkerd listens on 3333/tcp",
        "kworkerd connects to xmr.pool.example.net:3333",
    ],
)
def test_evidence_artifact_kinds(line):
    assert det(one(f"# R\n\n- {line}\n"), "evidence") == 1


@pytest.mark.parametrize(
    "line",
    [
        "kworkerd and/or its helper",
        "kworkerd used 1/2 of the CPU",
        "kworkerd started at 03:18 today",
        "kworkerd version 6.21.0",
        "kworkerd matched PasswordAuthentication yes",
        "kworkerd logged `Failed password`",
        "kworkerd fetched from https://example.org/k",
        "kworkerd at 999.1.1.1",
    ],
)
def test_evidence_not_an_artifact(line):
    assert det(one(f"# R\n\n- {line}\n"), "evidence") == 0
