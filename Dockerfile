# GraphiQL's files, from the npm packages that package-lock.json pins (with npm from the Node image): only the
# copies that scripts/graphiql-assets makes reach the image, which then serves the playground with no CDN.
FROM python:3.11-slim AS graphiql
COPY --from=node:20-slim /usr/local/bin/node /usr/local/bin/node
COPY --from=node:20-slim /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts/graphiql-assets scripts/
RUN node /usr/local/lib/node_modules/npm/bin/npm-cli.js ci --omit=dev --no-audit --no-fund --loglevel=error \
    && scripts/graphiql-assets

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml setup.py README.md ./
COPY gateway/ gateway/
COPY --from=graphiql /src/gateway/server/static/graphiql/ gateway/server/static/graphiql/
COPY schema/ schema/
RUN pip install . \
    && useradd --system --create-home --uid 10001 tablegraph

USER tablegraph
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
CMD ["tablegraph", "serve", "--host", "0.0.0.0", "--port", "8000"]
