"""The shipped alert rules (docs/examples/prometheus-alerts.yml), checked and unit-tested by
Debian's promtool (scripts/install-deps.sh installs `prometheus`) on synthetic series named
as discoverd's /metrics names them (test_metrics.py checks those names)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[3] / "docs" / "examples" / "prometheus-alerts.yml"

TESTS = """
rule_files: [{rules}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'ironsight_inspections_total{{result="success",failure_code=""}}'
        values: '0+1x60'
      - series: 'ironsight_inspections_total{{result="failed",failure_code="BOOT_NO_DHCP"}}'
        values: '0+1x60'
      - series: 'ironsight_inspection_quiet_seconds'
        values: '0+60x20'
    alert_rule_test:
      - eval_time: 40m
        alertname: IronsightInspectionFailureRate
        exp_alerts:
          - exp_labels: {{severity: warning}}
            exp_annotations:
              summary: "50% of inspections failed in the last 30 minutes"
              description: "{rate_description}"
      - eval_time: 5m
        alertname: IronsightInspectionStalled
        exp_alerts: []
      - eval_time: 13m
        alertname: IronsightInspectionStalled
        exp_alerts:
          - exp_labels: {{severity: warning}}
            exp_annotations:
              summary: "An inspection has shown no progress for 13m 0s"
              description: "{stall_description}"
  - interval: 1m
    input_series:
      - series: 'ironsight_inspections_total{{result="success",failure_code=""}}'
        values: '0+10x60'
      - series: 'ironsight_inspections_total{{result="failed",failure_code="RULE_FAILED"}}'
        values: '0+1x60'
      - series: 'ironsight_inspection_quiet_seconds'
        values: '0x60'
    alert_rule_test:
      - eval_time: 40m
        alertname: IronsightInspectionFailureRate
        exp_alerts: []
      - eval_time: 40m
        alertname: IronsightInspectionStalled
        exp_alerts: []
"""


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: scripts/install-deps.sh installs Debian's prometheus")
    return found


def test_the_alert_rules_are_valid() -> None:
    proc = subprocess.run([promtool(), "check", "rules", str(RULES)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 2 rules found" in proc.stdout


def test_the_alerts_fire_on_a_failure_rate_and_a_stall_and_not_otherwise(
        tmp_path: Path) -> None:
    tests = tmp_path / "alerts_test.yml"
    tests.write_text(TESTS.format(
        rules=RULES,
        rate_description='Read the failure codes: sum by (failure_code) (increase('
                         'ironsight_inspections_total{result=\\"failed\\"}[30m])), then '
                         'docs/troubleshooting.md \\"Failure codes\\".',
        stall_description="`ironsight introspection list --state waiting`, then `ironsight "
                          "node timeline NODE`: the last step seen says where it stalled."))
    proc = subprocess.run([promtool(), "test", "rules", str(tests)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout + proc.stderr
