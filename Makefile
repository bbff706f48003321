# ironsight — the two commands a new user runs: `make demo` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STATE := .state
PYTHON ?= python3

.PHONY: demo test deps venv lint typecheck unit functional bench clean

deps:
	@scripts/install-deps.sh

# The example processing-hook plugin (tests/plugins/example_hook) is installed too: the tests
# load it through its entry point, as an operator's own plugin would be.
$(VENV)/.installed: pyproject.toml tests/plugins/example_hook/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@mkdir -p $(STATE)
	@echo "installing Python packages into $(VENV) (log: $(STATE)/pip.log)"
	@{ $(PY) -m pip install -q -U pip && $(PY) -m pip install -q -e '.[test]' \
	    -e tests/plugins/example_hook; } \
	  > $(STATE)/pip.log 2>&1 || { cat $(STATE)/pip.log; exit 1; }
	@touch $@

venv: deps $(VENV)/.installed

lint: venv
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy

# A real Keystone (auth_strategy = keystone tests), a stock ironic-python-agent (the ramdisk
# tests), openstacksdk's own bare-metal test suite (tests/compat, run by
# tests/functional/compat) and the `openstack` CLI with the inspector client's plugin
# (tests/functional/compat/test_inspector_osc.py) and sushy-tools' Redfish emulator (the redfish
# driver's tests) live in venvs of their own under $(STATE).
test: venv lint
	@mkdir -p $(STATE)
	IRONSIGHT_TEST_PG_URL=$$(scripts/ensure-postgres.sh $(STATE)) \
	IRONSIGHT_TEST_KEYSTONE_VENV=$$(scripts/ensure-keystone.sh $(STATE)) \
	IRONSIGHT_TEST_SDK_SUITE_VENV=$$(scripts/ensure-sdk-suite.sh $(STATE)) \
	IRONSIGHT_TEST_IPA_VENV=$$(scripts/ensure-ipa.sh $(STATE)) \
	IRONSIGHT_TEST_OSC_VENV=$$(scripts/ensure-osc.sh $(STATE)) \
	IRONSIGHT_SUSHY_TOOLS_VENV=$$(scripts/ensure-sushy-tools.sh $(STATE)) \
	  $(VENV)/bin/pytest -q -p no:cacheprovider --durations=30

unit: venv
	$(VENV)/bin/pytest -q -m "not functional and not e2e"

# the Redfish VM's BMC is sushy-tools' emulator, in a venv of its own (as for the tests)
# KEEP=1: the lab stays up after the demo (its web console's URL is printed) until Enter
demo: venv
	@IRONSIGHT_DEMO_KEEP=$(KEEP) IRONSIGHT_SUSHY_TOOLS_VENV=$$(scripts/ensure-sushy-tools.sh $(STATE)) \
	  $(PY) -m ironsight.lab.demo

bench: venv
	$(PY) bench/bench_api.py

clean:
	rm -rf $(VENV) $(STATE) .pytest_cache .mypy_cache .ruff_cache
