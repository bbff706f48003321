"""The discovery ramdisk's agent: collects an IPA-format inventory and posts it.

It runs inside the ramdisk on a minimal Python, so this package uses the standard
library only, imports nothing else from `ironsight` and uses relative imports: the
`agent` directory can be copied alone into an initramfs and run as `python3 -m agent`.
"""

__version__ = "0.1.0"
