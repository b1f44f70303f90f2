"""Test helpers shared by several test modules (fake servers, fixtures)."""
