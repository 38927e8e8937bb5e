/**
 * A real service for integration tests: its own fresh database on the test Postgres, a
 * real HTTP server on a free port, and helpers to make merchants and keys.
 */
import { loadConfig, type Config } from "../api/src/config.ts";
import { randomBytes } from "node:crypto";
import { startService, type RunningService, type StartOptions } from "../api/src/server.ts";
import { createApiKey, createMerchant, type Merchant } from "../api/src/credentials/store.ts";
import type { Environment } from "../shared/environment.ts";
import { createTestDatabase } from "./database.ts";
import { loadChainsConfig } from "../shared/chains/config.ts";
import { setSettlement } from "../api/src/sessions/settlements.ts";
import { NetworkReadiness } from "../api/src/onchain/network-status.ts";

/** Closed ports: creating a session never contacts a network's RPC. */
export const TEST_CHAIN_ENV: Record<string, string> = {
  SERVICE_SESSION_RUNNER: "false",
  SERVICE_SWEEPER: "false",
  SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:9",
  SERVICE_RPC_URL_BASE: "http://127.0.0.1:9",
  SERVICE_INDEX_MODE: "full",
};
export const TEST_PRODUCTION_SETTLEMENT = "0x2222222222222222222222222222222222222222";

export interface TestService extends RunningService {
  config: Config;
  /** fetch against the service, JSON in and out. */
  call(method: string, path: string, opts?: { auth?: string; body?: unknown; headers?: Record<string, string>; base?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  merchant(name?: string): Promise<{ merchant: Merchant; sandboxKey: string; liveKey: string }>;
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

export async function startTestService(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestService> {
  const tdb = await createTestDatabase();
  const config = loadConfig({
    ...TEST_CHAIN_ENV,
    SERVICE_PORT: "0",
    SERVICE_RATE_LIMIT_PER_SECOND: "100000",
    SERVICE_RATE_LIMIT_BURST: "100000",
    // Tests deliver to receivers on 127.0.0.1, as `bun run dev` allows (webhook-targets.test.ts covers the default).
    SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    // A key per test service: tests never write one into the working tree's data dir.
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    ...env,
    DATABASE_URL: tdb.url,
  });
  // Sessions need networks for their deposit addresses. Unless a test brings real chains,
  // one sandbox and one production network whose RPC is never contacted (no chain workers).
  const chainEnv = { ...TEST_CHAIN_ENV, ...env };
  // Their readiness is taken for granted (nothing answers on the closed ports); a test of
  // readiness itself passes `readiness` (or `readiness: undefined` to have them probed).
  const networks = options.networks ?? loadChainsConfig(chainEnv).networks;
  const running = await startService(config, process.env.PAYSESSION_TEST_LOG ? (l: string) => console.log(`[svc] ${l}`) : () => {}, {
    networks,
    ...options,
    readiness: "readiness" in options ? options.readiness : NetworkReadiness.trusted(networks),
  });
  const db = running.services.database.db;
  return {
    ...running,
    config,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.auth !== undefined) headers.authorization = `Bearer ${opts.auth}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(`${opts.base ?? running.url}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // leave as text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async merchant(name = "Test merchant") {
      const merchant = await createMerchant(db, name);
      const sandbox = await createApiKey(db, merchant.id, "sandbox", "test");
      const live = await createApiKey(db, merchant.id, "production", "test");
      await setSettlement(db, merchant.id, "production", 8453, TEST_PRODUCTION_SETTLEMENT);
      return { merchant, sandboxKey: sandbox.secret, liveKey: live.secret };
    },
    async count(table: string) {
      const rows = await running.services.database.sql.unsafe(`select count(*)::int as n from app.${table}`);
      return rows[0]!.n as number;
    },
    async close() {
      await running.stop();
      await tdb.drop();
    },
  };
}

export type { Environment };
