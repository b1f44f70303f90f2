# One image for every service; the compose file picks the module each container runs.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy
RUN pip install --no-cache-dir uv
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY shared ./shared
COPY services ./services
COPY orquestra ./orquestra
COPY packs ./packs
RUN uv sync --frozen --no-dev
ENV PATH="/app/.venv/bin:$PATH"
CMD ["python", "-m", "services.gateway", "--host", "0.0.0.0", "--port", "8000"]
