"""Regenerate docs/configuration.md from the option definitions:
    .venv/bin/python scripts/gen-config-doc.py > docs/configuration.md
"""
import dataclasses, typing
from ironsight.common import config
out = ["# Configuration reference", "",
"ironsight reads one INI file (`ironsight serve --config-file FILE`). With no file it runs on the",
"embedded defaults below. Every option is typed and checked at start: an unknown section or",
"option, or a bad value, stops the service with a message naming `[section] option`.",
"`ironsight config sample` prints this list as a commented INI file;",
"`ironsight config check --config-file FILE` validates a file without starting anything.",
"",
"Secrets (the database URL may hold a password) are never logged.", ""]
for section, cls in config._section_types().items():
    out.append(f"## `[{section}]`"); out.append("")
    out.append("| option | type | default | meaning |"); out.append("|---|---|---|---|")
    hints = typing.get_type_hints(cls); d = cls()
    for f in dataclasses.fields(cls):
        v = getattr(d, f.name)
        if isinstance(v, list): v = ",".join(v)
        elif isinstance(v, bool): v = str(v).lower()
        if section == "DEFAULT" and f.name == "host": v = "hostname"
        v = f"`{v}`" if v != "" else "(empty)"
        out.append(f"| `{f.name}` | {config._type_name(hints[f.name])} | {v} | {f.metadata['help']} |")
    out.append("")
print("\n".join(out))
