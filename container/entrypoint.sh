#!/bin/sh
# One image, every role: the container's command names the role (docs/operators.md, "Run with
# containers"). Each role `exec`s bun on the role's own entry file, so bun is PID 1 and hears
# SIGTERM itself: it drains and exits 0 (docs/operators.md, "Stopping"). `bun run …` would put a
# second bun between the signal and the service.
set -eu

# Secrets from files (compose `secrets:`, a Kubernetes secret volume): any VAR_FILE=/path sets VAR
# to that file's content (without its trailing newline), so no secret is in the environment the
# compose file or `podman inspect` shows.
for name in $(env | sed -n 's/^\([A-Z_][A-Z0-9_]*\)_FILE=.*/\1/p'); do
  file=$(printenv "${name}_FILE")
  [ -r "$file" ] || { echo "[entrypoint] ${name}_FILE=$file is not a readable file" >&2; exit 64; }
  value=$(cat "$file")
  export "$name=$value"
  unset "${name}_FILE"
done

# Where the indexer's Ponder writes (the root filesystem is read-only: Containerfile).
mkdir -p /tmp/ponder

role=${1:-api}
[ $# -gt 0 ] && shift

case "$role" in
  api)
    # The API alone: the workers and the indexer run in their own containers.
    export SERVICE_SESSION_RUNNER="${SERVICE_SESSION_RUNNER:-false}" SERVICE_SWEEPER="${SERVICE_SWEEPER:-false}" \
      SERVICE_WEBHOOK_WORKER="${SERVICE_WEBHOOK_WORKER:-false}" SERVICE_INDEXER="${SERVICE_INDEXER:-false}" \
      SERVICE_BIND_HOST="${SERVICE_BIND_HOST:-0.0.0.0}"
    exec bun api/src/main.ts "$@" ;;
  all)
    # Every role in one process (`bun run start`): a small install in one container.
    export SERVICE_BIND_HOST="${SERVICE_BIND_HOST:-0.0.0.0}"
    exec bun api/src/main.ts "$@" ;;
  actors) exec bun api/src/sessions/main.ts "$@" ;;
  sweeper) exec bun api/src/sweeps/main.ts "$@" ;;
  webhooks) exec bun api/src/webhooks/main.ts "$@" ;;
  indexer) exec bun api/src/nodes/indexer-main.ts "$@" ;;
  migrate) exec bun api/src/cli/admin.ts migrate "$@" ;;
  admin) exec bun api/src/cli/admin.ts "$@" ;;
  # The local test network, reachable from the other containers (sandbox only).
  sandbox-chain) exec bun api/src/cli/admin.ts sandbox:chain --host 0.0.0.0 --port "${SERVICE_DEV_CHAIN_PORT:-8545}" --data-dir "${SERVICE_DATA_DIR:-/data}" "$@" ;;
  *) exec "$role" "$@" ;;
esac
