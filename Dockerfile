# One image for every service; the compose files pick the module each container runs.
# Two stages: uv, its cache and the build backend stay in the first; the image that runs holds
# the base, the virtualenv and the code (compiled), nothing else.
FROM python:3.11-slim AS build
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_NO_CACHE=1
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
# The project is installed editable (packs/ is found next to shared/); its own modules are
# compiled here because the unprivileged user cannot write their __pycache__ at run time, and
# by hash, so a copied file's time stamp does not matter.
RUN uv sync --frozen --no-dev \
 && python -m compileall -q --invalidation-mode unchecked-hash shared services orquestra

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PATH="/app/.venv/bin:$PATH"
# The services run unprivileged; the code and the virtualenv stay root's, read-only to them.
RUN useradd --create-home --uid 10001 orquestra
WORKDIR /app
COPY --from=build /app /app
USER orquestra
CMD ["python", "-m", "services.gateway", "--host", "0.0.0.0", "--port", "8000"]
