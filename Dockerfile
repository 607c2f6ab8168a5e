# foldbot's GitHub App as a container: `docker build -t foldbot .`, then run it with the App's
# settings in the environment (README: "Deploy"). The dependencies are the pinned ones of
# requirements.lock (`make lock`), the versions the tests passed with.
FROM python:3.11-slim

# git: patches are checked with `git apply` before they are shown.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PORT=8080
WORKDIR /src

# The lock first, in a layer of its own: a code change does not reinstall the dependencies.
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY handlers ./handlers
# foldbot itself, its dependencies only from the lock: `pip check` fails the build if the lock misses one.
RUN pip install --no-cache-dir --no-deps . && pip check

# Not root; run from its home, so `python -m bot` is the installed foldbot, not /src.
RUN useradd --create-home --uid 10001 foldbot
USER foldbot
WORKDIR /home/foldbot
# The journal of accepted deliveries (FOLDBOT_DATA_DIR, `data` here): a volume, so that a recreated
# container keeps what was accepted and not yet reported (`-v foldbot-data:/home/foldbot/data`).
RUN mkdir data
VOLUME ["/home/foldbot/data"]

EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health/live' % os.environ.get('PORT', '8080'), timeout=4)"]
CMD ["python", "-m", "bot", "serve"]
