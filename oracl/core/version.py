"""The package's version, in one place every plane may import."""

__version__ = "0.1.0"
