"""The interface fields of a node (Ironic keeps one per interface: `power_interface`...):
stored by the tables, shown and patched by the API, filled by the conductor."""

INTERFACE_FIELDS = ("boot_interface", "deploy_interface", "inspect_interface",
                    "management_interface", "power_interface")
