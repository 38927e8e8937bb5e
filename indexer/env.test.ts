/** The Ponder child gets what it needs to index, and none of the service's secrets. */
import { expect, test } from "bun:test";
import { indexerChildEnv } from "./process.ts";

const serviceEnv = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/paysession",
  LANG: "C.UTF-8",
  TZ: "UTC",
  HTTPS_PROXY: "http://proxy.internal:3128",
  NODE_EXTRA_CA_CERTS: "/etc/ssl/extra.pem",
  PGSSLMODE: "require",
  SERVICE_RPC_URL_BASE: "https://base.example/v2/provider-key",
  SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:8545",
  SERVICE_START_BLOCK_BASE: "123",
  SERVICE_CONFIRMATIONS_BASE: "10",
  SERVICE_STABLECOIN_ADDRESS_LOCAL: "0xe2b4152e3b6Cc732B52DF67F42b2cBDbaEe385a5",
  SERVICE_FACTORY_ADDRESS_LOCAL: "0xCFaA1c54e32bBF6Fb9E34312524c74607F1799f6",
  SERVICE_INDEX_MODE: "bounded",
  SERVICE_INDEXER_POLLING_MS: "250",
  PONDER_LOG_LEVEL: "warn",
  // Secrets of the service that the indexer has no use for.
  SERVICE_RELAYER_PRIVATE_KEY: "0x" + "ab".repeat(32),
  SERVICE_ENCRYPTION_KEY: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=",
  SERVICE_API_KEY: "sk_test_" + "x".repeat(40),
  DATABASE_PRIVATE_URL: "postgres://other",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  GITHUB_TOKEN: "ghp_secret",
  SERVICE_WEBHOOK_TIMEOUT_MS: "10000",
  DATABASE_URL: "postgres://user:pw@db/service",
};

test("only the allow-listed variables reach the indexer; the relayer and encryption keys do not", () => {
  const env = indexerChildEnv(serviceEnv, { DATABASE_URL: "postgres://user:pw@db/app", DATABASE_SCHEMA: "indexer", SERVICE_START_BLOCK_LOCAL: "7" });
  for (const secret of [
    "SERVICE_RELAYER_PRIVATE_KEY",
    "SERVICE_ENCRYPTION_KEY",
    "SERVICE_API_KEY",
    "DATABASE_PRIVATE_URL",
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
    "SERVICE_WEBHOOK_TIMEOUT_MS",
  ]) {
    expect({ [secret]: env[secret] }).toEqual({ [secret]: undefined });
  }
  const values = Object.values(env).join("\n");
  expect(values).not.toContain("ab".repeat(32));
  expect(values).not.toContain(serviceEnv.SERVICE_ENCRYPTION_KEY);

  expect(env).toMatchObject({
    DATABASE_URL: "postgres://user:pw@db/app", // the one given, not the service's own
    DATABASE_SCHEMA: "indexer",
    PONDER_TELEMETRY_DISABLED: "true",
    PONDER_LOG_LEVEL: "warn",
    SERVICE_RPC_URL_BASE: serviceEnv.SERVICE_RPC_URL_BASE,
    SERVICE_RPC_URL_LOCAL: serviceEnv.SERVICE_RPC_URL_LOCAL,
    SERVICE_START_BLOCK_BASE: "123",
    SERVICE_START_BLOCK_LOCAL: "7",
    SERVICE_CONFIRMATIONS_BASE: "10",
    SERVICE_STABLECOIN_ADDRESS_LOCAL: serviceEnv.SERVICE_STABLECOIN_ADDRESS_LOCAL,
    SERVICE_FACTORY_ADDRESS_LOCAL: serviceEnv.SERVICE_FACTORY_ADDRESS_LOCAL,
    SERVICE_INDEX_MODE: "bounded",
    SERVICE_INDEXER_POLLING_MS: "250",
    PATH: "/usr/bin:/bin",
    HOME: "/home/paysession",
    LANG: "C.UTF-8",
    TZ: "UTC",
    HTTPS_PROXY: serviceEnv.HTTPS_PROXY,
    NODE_EXTRA_CA_CERTS: serviceEnv.NODE_EXTRA_CA_CERTS,
    PGSSLMODE: "require",
  });
});
