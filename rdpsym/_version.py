"""The package's version (a leaf: what records a result's library versions reads it without importing the package root)."""

__version__ = "0.1.0"
