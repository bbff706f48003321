"""Inspection rules: one model and one engine for both API dialects (Ironic's
`/v1/inspection_rules` and ironic-inspector's `/v1/rules`). See docs/rules.md."""
