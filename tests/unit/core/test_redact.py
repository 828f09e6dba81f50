"""The redaction rules (storage/redact.hpp) through rocprof._core: what is cut from a command
line and from recorded text, and what must stay (ordinary flags, identifiers, paths)."""

from __future__ import annotations

import pytest
from rocprof import _core

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlc2lnbmF0dXJl"
R = "<redacted>"


@pytest.mark.parametrize("argv, expected", [
    (["--password", "x"], ["--password", R]),
    (["--passwd", "x", "--secret", "y"], ["--passwd", R, "--secret", R]),
    (["--token=abc", "--api-key=k1", "--access-key", "k2"], ["--token=" + R, "--api-key=" + R,
                                                             "--access-key", R]),
    (["--hf-token", "t", "--auth-token=t", "-password", "j"], ["--hf-token", R,
                                                               "--auth-token=" + R, "-password", R]),
    (["--db.password=p", "db.password=p", "+db.password=p"], ["--db.password=" + R,
                                                              "db.password=" + R,
                                                              "+db.password=" + R]),
    (["HF_TOKEN=t", "AWS_SECRET_ACCESS_KEY=k"], ["HF_TOKEN=" + R, "AWS_SECRET_ACCESS_KEY=" + R]),
    (["-p", "P@ssw0rd!x", "-p=Hunter2!abc", "-pS3cret#Pass"], ["-p", R, "-p=" + R, "-p" + R]),
    (["--password", "--verbose"], ["--password", "--verbose"]),  # no value given: nothing to cut
    (["--data", "https://u:pw@host/x", GH], ["--data", f"https://u:{R}@host/x", R]),
    (["-H", "Authorization: Bearer abcDEF123456789"], ["-H", f"Authorization: Bearer {R}"]),
    (["--jwt-file", "f", JWT], ["--jwt-file", "f", R]),
])
def test_argv_secrets_are_cut(argv, expected):
    assert _core.redact_argv(argv) == expected


@pytest.mark.parametrize("argv", [
    ["-p", "8080"], ["-p", "out_dir"], ["-p", "resnet50"], ["-p8080"], ["-pedantic"],
    ["--max-tokens", "512"], ["--max-new-tokens=64"], ["--tokenizer", "gpt2"],
    ["--pad-token", "<pad>"], ["--token-budget", "4096"], ["--num-token", "7"],
    ["--key", "name"], ["--sort-key=size"], ["--lr", "3e-4"],
    ["--data", "/mnt/datasets/ImageNet2012/TrainingImagesFolderXX"],
    ["--mode", "Basic training"], ["https://example.com/path?q=1"],
    ["--run-name", "hf_model_forward_pass_step2"], ["sk-learn-experiments-2024"],
    ["--commit", "0123456789abcdef0123456789abcdef01234567"],
])
def test_ordinary_arguments_stay(argv):
    assert _core.redact_argv(argv) == argv


@pytest.mark.parametrize("text, expected", [
    ("fetch https://alice:pw@db/x", f"fetch https://alice:{R}@db/x"),
    (f"token {GH} here", f"token {R} here"),
    ("aws AKIAIOSFODNN7EXAMPLE id", f"aws {R} id"),
    ("glpat-abcdefghij0123456789 x", f"{R} x"),
    ("xoxb-1234567890-abcdefghij", R),
    (f"jwt={JWT}", f"jwt={R}"),
    ("hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH", R),
])
def test_recorded_text_shapes_are_cut(text, expected):
    assert _core.redact_text(text) == expected


@pytest.mark.parametrize("text", [
    "forward", "hf_model_forward_pass_step2", "sk-learn-experiments-2024",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float>>",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEvi",
    "Basic blocktiling", "Bearer of news", "https://example.com/a@b", "user@host:/path",
    "AKIAshort", "eyJ not a jwt",
])
def test_ordinary_text_stays(text):
    assert _core.redact_text(text) == text
