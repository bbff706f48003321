"""ironsight: in-band hardware inspection for bare-metal fleets."""

__version__ = "0.1.0"
