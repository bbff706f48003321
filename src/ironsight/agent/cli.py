"""`python -m ironsight.agent`: collect the inventory, then print it or post it.

Exit codes: 0 posted (or printed), 1 could not post, 2 no callback URL.
"""

from __future__ import annotations

import argparse
import json
import os

from . import __version__, beats, cmdline, document, hello, lldp, post

EXIT_OK, EXIT_POST_FAILED, EXIT_NO_URL = 0, 1, 2


class _Formatter(argparse.HelpFormatter):
    """Width from $COLUMNS: argparse's own lookup imports shutil (with bz2, lzma), and
    it builds a formatter for every add_argument, help or not."""

    def __init__(self, prog: str) -> None:
        columns = os.environ.get("COLUMNS", "")
        super().__init__(prog, width=(int(columns) if columns.isdigit() else 80) - 2)


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog or "ironsight-agent", formatter_class=_Formatter,
        description="Collect this machine's hardware inventory (ironic-python-agent format) "
                    "and post it to the inspection service.")
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the document as indented JSON instead of posting it")
    p.add_argument("--callback-url", metavar="URL",
                   help="where to post (comma-separated URLs are tried in order); default: "
                        "the kernel command line's " + ", ".join(cmdline.CALLBACK_KEYS))
    p.add_argument("--root", default="/", metavar="DIR",
                   help="read /proc, /sys and /dev under DIR (fixture trees); default: /")
    p.add_argument("--retries", type=int, default=post.ATTEMPTS - 1, metavar="N",
                   help="retries per URL after the first attempt (default: %(default)s)")
    p.add_argument("--backoff", type=float, default=post.DELAY, metavar="SECONDS",
                   help="first wait between attempts, doubled each time up to "
                        f"{post.MAX_DELAY:g} s (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=post.TIMEOUT, metavar="SECONDS",
                   help="timeout of one request (default: %(default)s)")
    p.add_argument("--lldp-timeout", type=float, metavar="SECONDS",
                   help="how long to wait for LLDP frames (0: do not wait); default: the "
                        "kernel command line's ipa-lldp-timeout, else "
                        f"{lldp.DEFAULT_TIMEOUT:g}")
    p.add_argument("--version", action="version", version=f"ironsight-agent {__version__}")
    return p


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    args = parser(prog).parse_args(argv)
    params = cmdline.read_params(args.root)
    urls = cmdline.split_urls(args.callback_url or "") or cmdline.callback_urls(params)
    if not urls and not args.print_only:
        post.log("no callback URL: pass --callback-url or boot with "
                 + "= or ".join(cmdline.CALLBACK_KEYS) + "=")
        return EXIT_NO_URL
    token = cmdline.callback_token(params)
    progress = None
    if not args.print_only:
        greeted = hello.say_hello(urls, token, args.root)
        if greeted is not None:
            progress = beats.Beats(beats.url_for(greeted), token, hello.macs(args.root),
                                   args.root).start()
    doc = document.build(args.root, params, lldp_timeout=args.lldp_timeout)
    for warning in _strings(doc.get("warnings")):
        post.log("warning: " + warning)
    if doc.get("error"):
        post.log(f"error: {doc['error']}")
    if args.print_only:
        print(json.dumps(doc, indent=2))
        return EXIT_OK
    if token is None:
        post.log(f"no callback token ({cmdline.TOKEN_KEY}=) on the kernel command line: the "
                 "report is accepted only where tokenless reports are allowed")
    if progress is not None:
        progress.finish("posting")  # the log so far, before the report ends the attempt
    code = _deliver(json.dumps(doc).encode(), urls, args, token)
    if progress is not None and code != EXIT_OK:
        progress.finish("post_failed")  # why, while the introspection still waits
    return code


def _deliver(body: bytes, urls: list[str], args: argparse.Namespace,
             token: str | None = None) -> int:
    """Post to each URL in turn; the token goes in a header, never in argv or the log."""
    headers = {cmdline.TOKEN_HEADER: token} if token else {}
    for url in urls:
        post.log(f"posting {len(body)} bytes to {url}")
        try:
            reply = post.post(url, body, attempts=args.retries + 1, delay=args.backoff,
                              timeout=args.timeout, headers=headers)
        except post.PostError as exc:
            post.log(str(exc))
            continue
        print(f"callback accepted by {url}: HTTP {reply.status} {reply.body}", flush=True)
        return EXIT_OK
    return EXIT_POST_FAILED


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []
