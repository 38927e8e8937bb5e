#!/bin/sh
# The compose set's secrets, once, as files (compose.yaml `secrets:`): the database password, the
# DATABASE_URL holding it, and SERVICE_ENCRYPTION_KEY (keep it: it seals the webhook secrets;
# docs/operators.md, Key rotation). Into $PAYSESSION_SECRETS, default ./.secrets; never overwrites.
set -eu
dir=${PAYSESSION_SECRETS:-./.secrets}
mkdir -p "$dir" && chmod 700 "$dir"
umask 077
[ -e "$dir/postgres_password" ] || openssl rand -hex 24 > "$dir/postgres_password"
[ -e "$dir/database_url" ] || printf 'postgres://paysession:%s@postgres:5432/paysession\n' "$(cat "$dir/postgres_password")" > "$dir/database_url"
[ -e "$dir/encryption_key" ] || openssl rand -base64 32 > "$dir/encryption_key"
# The containers run as their own users: the files are readable by them, the directory by you alone.
chmod 644 "$dir"/*
echo "secrets in $dir"
