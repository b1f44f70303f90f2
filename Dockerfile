# One image for every service; the compose file picks the module each container runs.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy
# uv pinned: every build resolves uv.lock with the same uv.
ARG UV_VERSION=0.13.9
RUN pip install --no-cache-dir "uv==${UV_VERSION}"
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY shared ./shared
COPY services ./services
COPY orquestra ./orquestra
COPY packs ./packs
RUN uv sync --frozen --no-dev
# The services run unprivileged; the code and the virtualenv stay root's, read-only to them.
RUN useradd --create-home --uid 10001 orquestra
USER orquestra
ENV PATH="/app/.venv/bin:$PATH"
CMD ["python", "-m", "services.gateway", "--host", "0.0.0.0", "--port", "8000"]
