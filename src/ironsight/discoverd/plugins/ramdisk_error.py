"""`ramdisk_error`: a ramdisk that reports an error ends the introspection with it."""

from __future__ import annotations

from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook, ReportedError


class RamdiskError(ProcessingHook):
    name = "ramdisk_error"

    def before_processing(self, ctx: ProcessingContext) -> None:
        error = ctx.data.get("error")
        if error:
            raise ReportedError(f"Ramdisk reported error: {error}")
