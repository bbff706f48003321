"""Run the request sequences of cases.py against an Ironic-compatible API and write (or return)
what came back, normalised so two services can be compared: status, a few headers, the body's
shape, Ironic's error text and, where a step asks, exact values.

    python tests/compat/ironic_peer/record.py http://127.0.0.1:6385 \
        tests/functional/api/ironic39/recorded.json

The replay test (tests/functional/api/test_ironic39_parity.py) runs the same steps through
`run_case` against ironsight in-process and compares with the recording.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

try:
    from . import cases as cases_module
except ImportError:  # run as a script: this file's folder is on sys.path
    import cases as cases_module  # type: ignore[no-redef]

VERSION_HEADER = "X-OpenStack-Ironic-API-Version"
KEPT_HEADERS = ("content-type", "allow", "x-openstack-ironic-api-version",
                "x-openstack-ironic-api-minimum-version",
                "x-openstack-ironic-api-maximum-version")
DEFAULT_CHECKS = ("status", "headers", "shape", "error", "values")

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)?")
_VAR = re.compile(r"\{([a-z][a-z0-9_]*)\}")


# ---------------------------------------------------------------- normalisation

def substitute(value: Any, variables: Mapping[str, str]) -> Any:
    """`{name}` -> the value an earlier step saved (unknown names stay as they are)."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {substitute(k, variables): substitute(v, variables) for k, v in value.items()}
    return value


def scrub(text: str, variables: Mapping[str, str]) -> str:
    """Saved values back to their `{name}`, other UUIDs and timestamps to placeholders."""
    for name, value in sorted(variables.items(), key=lambda kv: -len(kv[1])):
        if value and len(value) >= 4:
            text = text.replace(value, "{" + name + "}")
    text = _UUID.sub("<uuid>", text)
    return _TIME.sub("<time>", text)


def scrub_value(value: Any, variables: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return scrub(value, variables)
    if isinstance(value, list):
        return [scrub_value(v, variables) for v in value]
    if isinstance(value, dict):
        return {scrub(k, variables): scrub_value(v, variables) for k, v in value.items()}
    return value


def shape(value: Any) -> Any:
    """Keys recursively with their value types; a list is its length and its first item's
    shape."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return {"<list>": len(value), "<item>": shape(value[0]) if value else None}
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str"


def extract(body: Any, path: str) -> Any:
    """A value by a dotted path: `a.b`, `*` maps over a list (or a dict's values),
    `#keys` is the sorted keys of a dict, `#len` a length; a missing key is `<missing>`."""
    parts = [p for p in path.split(".") if p]

    def walk(value: Any, rest: list[str]) -> Any:
        if not rest:
            return value
        head, tail = rest[0], rest[1:]
        if head == "#keys":
            return sorted(value) if isinstance(value, dict) else "<not a dict>"
        if head == "#len":
            return len(value) if isinstance(value, list | dict) else "<no length>"
        if head == "*":
            items = value if isinstance(value, list) else (
                list(value.values()) if isinstance(value, dict) else [])
            return [walk(v, tail) for v in items]
        if isinstance(value, dict):
            return walk(value[head], tail) if head in value else "<missing>"
        if isinstance(value, list) and head.isdigit():
            index = int(head)
            return walk(value[index], tail) if index < len(value) else "<missing>"
        return "<missing>"

    return walk(body, parts)


def ironic_error(body: Any) -> tuple[str, str] | None:
    """Ironic's double-encoded error envelope: the keys of the inner document (its form:
    `debuginfo,faultcode,faultstring` from the API's own errors, `code,description,title`
    from the web framework's) and its text (faultstring, else description); None when the
    body is not one."""
    if not isinstance(body, dict) or set(body) != {"error_message"}:
        return None
    raw = body["error_message"]
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return "<not json>", raw
    if isinstance(raw, dict):
        form = ",".join(sorted(raw))
        for key in ("faultstring", "description", "title"):
            if key in raw:
                return form, str(raw[key])
        return form, ""
    return f"<{type(raw).__name__}>", str(raw)


def header_set(value: str) -> str:
    """A comma-separated header as a sorted, normalised list (Allow)."""
    return ", ".join(sorted(v.strip().upper() for v in value.split(",") if v.strip()))


def observe(step: Mapping[str, Any], resp: httpx.Response,
            variables: Mapping[str, str]) -> dict[str, Any]:
    """What is recorded (and compared) about one response."""
    checks = step.get("check", DEFAULT_CHECKS)
    out: dict[str, Any] = {"status": resp.status_code}
    if "headers" in checks:
        headers: dict[str, str] = {}
        for name in KEPT_HEADERS:
            if name in resp.headers:
                value = resp.headers[name]
                if name == "allow":
                    value = header_set(value)
                elif name == "content-type":
                    value = value.replace(" ", "").lower()
                headers[name] = value
        out["headers"] = headers
    body: Any = None
    if resp.content:
        try:
            body = resp.json()
        except ValueError:
            out["body"] = "<text>"
    else:
        out["body"] = "<empty>"
    if body is not None:
        error = ironic_error(body)
        if error is not None:
            out["body"] = "<ironic error>"
            if "error" in checks:
                out["error_form"] = error[0]
                out["error"] = scrub(error[1], variables)
        elif "shape" in checks:
            out["shape"] = shape(body)
        else:
            out["body"] = "<json>"
        if "values" in checks and step.get("values") and error is None:
            out["values"] = {p: scrub_value(extract(body, p), variables)
                             for p in step["values"]}
    return out


# ---------------------------------------------------------------- running

def _waited(step: Mapping[str, Any], resp: httpx.Response) -> bool:
    cond = step.get("wait_for")
    if not cond:
        return True
    try:
        body = resp.json()
    except ValueError:
        return False
    return bool(extract(body, cond["path"]) == cond["equals"])


async def run_step(client: httpx.AsyncClient, step: Mapping[str, Any],
                   variables: dict[str, str],
                   tokens: Mapping[str, str] | None = None) -> dict[str, Any]:
    headers: dict[str, str] = dict(step.get("headers") or {})
    if step.get("version") is not None:
        headers[VERSION_HEADER] = step["version"]
    if step.get("as"):
        if tokens is None or step["as"] not in tokens:
            raise KeyError(f"no token for user {step['as']!r}")
        headers["X-Auth-Token"] = tokens[step["as"]]
    path = substitute(step["path"], variables)
    body = substitute(step.get("json"), variables)
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs["json"] = body
    elif step.get("content") is not None:
        kwargs["content"] = step["content"]
    timeout = float((step.get("wait_for") or {}).get("timeout", 10))
    deadline = time.monotonic() + timeout
    while True:
        try:
            resp = await client.request(step["method"], path, **kwargs)
        except httpx.RemoteProtocolError:
            # a kept-alive connection the server had just closed (cheroot): sent again once
            resp = await client.request(step["method"], path, **kwargs)
        if _waited(step, resp) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    for name, where in (step.get("save") or {}).items():
        try:
            variables[name] = str(extract(resp.json(), where))
        except ValueError:
            variables[name] = "<unsaved>"
    observed = observe(step, resp, variables)
    if step.get("not_compared"):
        observed["not_compared"] = step["not_compared"]
    return observed


async def run_case(client: httpx.AsyncClient, case: Mapping[str, Any],
                   tokens: Mapping[str, str] | None = None,
                   variables: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Every step of a case, in order, whatever each answers (clean-up steps run too).
    `variables`: values known before the first step (the Keystone projects' IDs)."""
    variables = dict(variables or {})
    results: dict[str, dict[str, Any]] = {}
    for step in case["steps"]:
        if step["name"] in results:
            raise ValueError(f"case {case['name']}: step name {step['name']} twice")
        results[step["name"]] = await run_step(client, step, variables, tokens)
    return results


def compare(expected: Mapping[str, Any], got: Mapping[str, Any],
            volatile: tuple[str, ...] | list[str] = ()) -> list[str]:
    """How one step's observation differs from the recording (empty when it does not).
    Headers: Content-Type's media type and Allow must match; a version header Ironic sent
    must be sent with the same value (one Ironic leaves out may be there). `volatile`:
    top-level body keys whose value type is not compared (a step's "volatile")."""
    if volatile:
        expected, got = _without(expected, volatile), _without(got, volatile)
    diffs = []
    for key in ("status", "headers", "body", "shape", "error_form", "error", "values"):
        if key not in expected and key not in got:
            continue
        want, have = expected.get(key), got.get(key)
        if key == "headers":
            want, have = dict(want or {}), dict(have or {})
            for name in sorted(set(want) | set(have)):
                w, h = want.get(name), have.get(name)
                if name == "content-type":
                    w, h = (v.split(";")[0] if v else v for v in (w, h))
                elif name.startswith("x-openstack") and w is None:
                    continue
                if w != h:
                    diffs.append(f"header {name}: Ironic {w!r}, here {h!r}")
        elif key == "shape" and want != have:
            diffs.append("shape: " + "; ".join(shape_diff(want, have)))
        elif want != have:
            diffs.append(f"{key}: Ironic {want!r}, here {have!r}")
    return diffs


def _without(observed: Mapping[str, Any], keys: tuple[str, ...] | list[str]
             ) -> dict[str, Any]:
    out = dict(observed)
    if isinstance(out.get("shape"), dict):
        out["shape"] = {k: v for k, v in out["shape"].items() if k not in keys}
    return out


def shape_diff(want: Any, have: Any, where: str = "") -> list[str]:
    if isinstance(want, dict) and isinstance(have, dict):
        out = []
        for k in sorted(set(want) | set(have)):
            if k not in have:
                out.append(f"{where}{k} missing")
            elif k not in want:
                out.append(f"{where}{k} extra")
            else:
                out.extend(shape_diff(want[k], have[k], f"{where}{k}."))
        return out
    if want != have:
        return [f"{where.rstrip('.') or '<body>'}: {want!r} vs {have!r}"]
    return []


async def record(base_url: str, names: list[str] | None = None,
                 tokens: Mapping[str, str] | None = None,
                 case_list: list[dict[str, Any]] | None = None,
                 variables: Mapping[str, str] | None = None) -> dict[str, Any]:
    chosen = [c for c in (case_list or cases_module.CASES) if not names or c["name"] in names]
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        for case in chosen:
            out[case["name"]] = await run_case(client, case, tokens, variables)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base_url")
    parser.add_argument("output")
    parser.add_argument("--case", action="append", help="only these cases (repeatable)")
    parser.add_argument("--cases", default="CASES",
                        help="the list in cases.py to run (CASES, KEYSTONE_CASES)")
    parser.add_argument("--tokens", help="a JSON file {user: token} for steps with `as`")
    parser.add_argument("--vars", help="a JSON file {name: value} known before the first step "
                        "(recorded as {name})")
    parser.add_argument("--peer", default="Ironic 39", help="what is recorded (a note)")
    args = parser.parse_args(argv)
    tokens = json.loads(Path(args.tokens).read_text()) if args.tokens else None
    variables = json.loads(Path(args.vars).read_text()) if args.vars else None
    case_list = getattr(cases_module, args.cases)
    with httpx.Client(base_url=args.base_url, timeout=10) as probe:
        root = probe.get("/").json()
        leftovers = probe.get("/v1/nodes", headers={
            VERSION_HEADER: "1.1", **({"X-Auth-Token": next(iter(tokens.values()))}
                                      if tokens else {})})
    if leftovers.status_code == 200 and leftovers.json().get("nodes"):
        print("warning: the peer already has nodes; a fresh database records cleaner",
              file=sys.stderr)
    recorded = asyncio.run(record(args.base_url, args.case, tokens, case_list, variables))
    document = {
        "peer": args.peer,
        "max_version": root.get("default_version", {}).get("version"),
        "cases": recorded,
    }
    if args.case and Path(args.output).exists():  # re-record some cases only
        old = json.loads(Path(args.output).read_text())
        old["cases"].update(recorded)
        document["cases"] = old["cases"]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(document, indent=1) + "\n")
    steps = sum(len(c) for c in recorded.values())
    print(f"recorded {len(recorded)} cases, {steps} steps into {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
