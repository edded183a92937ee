"""Stated uncertainty of a release, from public quantities only (docs/uncertainty.md)."""
