"""Errors shared by both services; each carries the HTTP status the API answers with."""

from __future__ import annotations


class IronsightError(Exception):
    """Base error: `code` is the HTTP status an API maps it to."""

    code = 500

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class RoutingError(IronsightError):
    """The web framework's own refusal (no such path, no such method, a route older than
    the requested version where the upstream's framework answers): Ironic words these
    `{code, title, description}` with a bare `description`, not as its API's faults.
    `message` stays informative for logs and for APIs without such a form."""

    def __init__(self, message: str, code: int, description: str = "",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message, code)
        self.description = description
        self.headers = headers or {}


class ConfigError(IronsightError):
    """A bad configuration file or option; names the section and option."""


class Invalid(IronsightError):
    code = 400


class InvalidParameterValue(Invalid):
    pass


class MissingParameterValue(Invalid):
    pass


class InvalidStateRequested(Invalid):
    pass


class NotFound(IronsightError):
    code = 404


class Forbidden(IronsightError):
    code = 403


class Conflict(IronsightError):
    code = 409


class NodeLocked(Conflict):
    def __init__(self, node: str, host: str) -> None:
        super().__init__(
            f"Node {node} is locked by host {host}, please retry after the current "
            "operation is completed."
        )


class LockLost(Conflict):
    """A write under a node lock that its writer no longer holds (it was declared dead and
    the lock released, or taken again since): the write is refused and its result dropped."""

    def __init__(self, node: str, owner: str) -> None:
        super().__init__(
            f"Node {node}: the lock of {owner} was released or taken over while it worked; "
            "its change was not written, please retry.")


class NotAcceptable(IronsightError):
    code = 406


class NoFreeWorker(IronsightError):
    code = 503


class DatabaseUnavailable(IronsightError):
    """The database could not be reached or the connection broke (a restart, a fail-over):
    the request's transaction was rolled back (unless the break came during its COMMIT,
    whose outcome the client cannot know: a retry then meets the new state). The driver's
    text is logged, not shown (it names hosts and ports)."""

    code = 503

    def __init__(self, cause: Exception) -> None:
        super().__init__("The database is unavailable; please retry later.")
        self.cause = cause


class StorageFull(DatabaseUnavailable):
    """The database's storage is full (SQLite: "database or disk is full"; PostgreSQL:
    SQLSTATE 53100 disk_full): 507, with the transaction rolled back. A DatabaseUnavailable
    still, so that background work waits and retries as through an outage."""

    code = 507

    def __init__(self, cause: Exception) -> None:
        super().__init__(cause)
        self.message = ("The database's storage is full; nothing was changed. Free space "
                        "where the database is stored, then retry.")
        self.args = (self.message,)


class DriverError(IronsightError):
    """A driver could not talk to the hardware (BMC, hypervisor)."""

    code = 500


class PowerStateFailure(DriverError):
    pass


class DriverLoadError(IronsightError):
    code = 400


class UnsupportedDriverExtension(Invalid):
    pass


class DiscoverdDisabled(Invalid):
    """Inspection through discoverd was asked for but `[discoverd] enabled` is false (the
    design's new exception; raised by DiscoverdInspect and by the conductor when no inspect
    interface takes ramdisk reports)."""

    def __init__(self) -> None:
        super().__init__(
            "In-band inspection through discoverd is disabled: set [discoverd] enabled = true "
            "and [discoverd] service_url in the bare-metal service's configuration "
            "(see docs/inspection.md)")
