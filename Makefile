# Two entry points, both self-contained on a fresh machine with Python 3.11:
#   make run   - set up .venv and print foldbot's report on its embedded example
#   make test  - set up .venv with the test extras and run the whole suite
#   make lock  - write requirements.lock (the Dockerfile's pins) from what .venv has installed
#   make screenshots - docs/screenshots/*.png: the dashboard and a PR comment as GitHub shows them
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test bench lock screenshots clean redis-server chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/foldbot analyze

# The Redis journal's tests need a real redis-server (Debian's package). Under CI they fail without it;
# elsewhere they are skipped, saying why, when it cannot be installed (not root, no apt-get).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null; } || \
		echo "make: redis-server is not installed and could not be; the Redis tests are skipped (they fail under CI=true)"

# The real-browser test of `foldbot register` needs Debian's chromium (headless), the same way.
chromium:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
		echo "make: chromium is not installed and could not be; the real-browser test is skipped (it fails under CI=true)"

test: $(VENV)/.installed redis-server chromium
	$(BIN)/python -m pytest -q -n auto

bench: $(VENV)/.installed
	$(BIN)/python bench/analysis.py
	$(BIN)/python bench/webhook.py
	$(BIN)/python bench/journal_commit.py
	$(BIN)/python bench/log_memory.py

screenshots: $(VENV)/.installed chromium
	$(BIN)/python scripts/screenshots.py

lock: $(VENV)/.installed
	$(BIN)/python scripts/lock.py > requirements.lock

clean:
	rm -rf $(VENV) build *.egg-info
