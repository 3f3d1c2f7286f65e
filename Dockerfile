# Home Assistant add-on image (CPU). The Supervisor passes BUILD_FROM and BUILD_ARCH from
# build.yaml; `docker build --build-arg BUILD_FROM=... .` works the same way by hand.
ARG BUILD_FROM=ghcr.io/home-assistant/amd64-base-debian:bookworm

# --- build: llama-cpp-python from source, portable (no -march=native), into /opt/venv ---------
FROM ${BUILD_FROM} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
WORKDIR /src
COPY pyproject.toml README.md ./
COPY hub ./hub
COPY scripts/install.sh ./scripts/install.sh
RUN PYTHON=/opt/venv/bin/python scripts/install.sh --portable --no-editable \
    && /opt/venv/bin/python -m pip cache purge

# --- runtime: the base image, Python and the venv; no compiler ------------------------------
FROM ${BUILD_FROM}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# libgomp1: llama.cpp's OpenMP threads
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 libgomp1 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/venv /opt/venv
COPY docker/run.sh /run.sh
RUN chmod a+x /run.sh && /opt/venv/bin/bolt-hub --version

# s6-overlay's /init (the base image's entrypoint, hence `init: false`) must pass the
# Supervisor's environment (SUPERVISOR_TOKEN) on to /run.sh.
ENV PATH="/opt/venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    S6_KEEP_ENV=1
EXPOSE 8099 10500
# Docker restarts nothing by itself; the Supervisor's watchdog (config.yaml) restarts a hub whose
# /health stops answering. This check also asks the Wyoming server for `describe`, as the
# official add-ons do, once the warm-up (model load and priming) is over.
HEALTHCHECK --interval=30s --timeout=15s --start-period=10m \
    CMD ["/opt/venv/bin/bolt-hub", "health"]
CMD ["/run.sh"]

ARG BUILD_ARCH=amd64
ARG BUILD_VERSION=0.3.0
LABEL io.hass.name="Bolt Hub" \
      io.hass.description="Local voice hub: Nemotron 3.5 Bolt E4B as a Wyoming conversation agent" \
      io.hass.type="addon" \
      io.hass.arch="${BUILD_ARCH}" \
      io.hass.version="${BUILD_VERSION}"
