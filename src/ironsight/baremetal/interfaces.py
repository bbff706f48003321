"""The interface fields of a node (Ironic keeps one per interface: `power_interface`...):
stored by the tables, shown and patched by the API, filled by the conductor."""

# The interfaces ironsight implements (the conductor calls them).
ACTIVE_INTERFACES = ("boot", "deploy", "inspect", "management", "power")
# The interfaces Ironic has beside those: stored per node with the values each hardware type
# accepts (Ironic's fake and no-* names); of these only a fake console and a fake vendor
# interface are called (drivers/fake.py).
STORED_INTERFACES = ("bios", "console", "firmware", "network", "raid", "rescue", "storage",
                     "vendor")
INTERFACES = ACTIVE_INTERFACES + STORED_INTERFACES
INTERFACE_FIELDS = tuple(f"{name}_interface" for name in INTERFACES)
# What a node showed for the stored interfaces before they were stored (migration 0004).
LEGACY_STORED = {"bios": "no-bios", "console": "no-console", "firmware": "no-firmware",
                 "network": "noop", "raid": "no-raid", "rescue": "no-rescue",
                 "storage": "noop", "vendor": "no-vendor"}
