"""Where the checkout's files are, for tests that read them."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root."""
