import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "./config.ts";
import { messageOf } from "../../shared/describe-error.ts";

test("defaults boot with nothing set", () => {
  const c = loadConfig({});
  expect(c.port).toBe(4000);
  expect(c.publicUrl.toString()).toBe("http://localhost:4000/");
  expect(c.sandboxPublicUrl.toString()).toBe(c.publicUrl.toString());
  expect(c.databaseUrl).toBeUndefined();
  expect(c.minAmountMinor).toBe(50n);
  expect(c.maxAmountMinor).toBe(100_000_000n);
  expect(c.sessionDefaultExpirySeconds).toBe(1800);
});

test("every bad value is reported, each on its own line", () => {
  let err: unknown;
  try {
    loadConfig({
      SERVICE_PORT: "eighty",
      SERVICE_PUBLIC_URL: "ftp://x",
      DATABASE_URL: "mysql://x",
      SERVICE_MIN_AMOUNT: "1",
      SERVICE_RATE_LIMIT_PER_SECOND: "0",
      SERVICE_LOG_REQUESTS: "maybe",
    });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  const problems = (err as ConfigError).problems;
  expect(problems.length).toBe(6);
  for (const name of ["SERVICE_PORT", "SERVICE_PUBLIC_URL", "DATABASE_URL", "SERVICE_MIN_AMOUNT", "SERVICE_RATE_LIMIT_PER_SECOND", "SERVICE_LOG_REQUESTS"]) {
    expect(problems.some((p) => p.startsWith(name))).toBe(true);
  }
  expect(messageOf(err).split("\n").length).toBe(7);
});

test("inconsistent values are refused", () => {
  expect(() => loadConfig({ SERVICE_MIN_AMOUNT: "10.00", SERVICE_MAX_AMOUNT: "5.00" })).toThrow(/SERVICE_MIN_AMOUNT must not exceed/);
});

test("webhook settings: defaults, and each bad value reported", () => {
  const c = loadConfig({});
  expect(c.webhooks.retrySchedule.length).toBe(10);
  expect([c.webhooks.timeoutMs, c.webhooks.leaseMs, c.webhooks.worker]).toEqual([10_000, 60_000, true]);
  expect(c.encryptionKey).toBeUndefined();
  const key = Buffer.alloc(32, 7);
  expect(loadConfig({ SERVICE_ENCRYPTION_KEY: key.toString("base64") }).encryptionKey).toEqual(key);
  expect(loadConfig({ SERVICE_ENCRYPTION_KEY: key.toString("hex") }).encryptionKey).toEqual(key);
  let err: unknown;
  try {
    loadConfig({
      SERVICE_ENCRYPTION_KEY: "short",
      SERVICE_WEBHOOK_RETRY_SCHEDULE: "5s,soon",
      SERVICE_WEBHOOK_TIMEOUT_MS: "20000",
      SERVICE_WEBHOOK_LEASE_MS: "30000",
      SERVICE_WEBHOOK_WORKER: "perhaps",
    });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  const problems = (err as ConfigError).problems;
  for (const name of ["SERVICE_ENCRYPTION_KEY", "SERVICE_WEBHOOK_RETRY_SCHEDULE", "SERVICE_WEBHOOK_LEASE_MS", "SERVICE_WEBHOOK_WORKER"]) {
    expect(problems.some((p) => p.startsWith(name))).toBe(true);
  }
  expect(problems.length).toBe(4);
});

test("sweeper settings: defaults, bounds, and a relayer key that is validated but never shown", () => {
  const d = loadConfig({});
  expect(d.sweeps).toMatchObject({ enabled: true, batchSize: 50, maxAttempts: 5, stuckMs: 120_000, pollMs: 1000, retryBaseMs: 30_000 });
  expect(d.sweeps.relayerPrivateKey).toBeUndefined();
  const key = `0x${"ab".repeat(32)}`;
  const c = loadConfig({ SERVICE_RELAYER_PRIVATE_KEY: key, SERVICE_SWEEPER: "false", SERVICE_SWEEP_BATCH_SIZE: "20" });
  expect(c.sweeps.relayerPrivateKey?.reveal()).toBe(key as `0x${string}`);
  expect(`${c.sweeps.relayerPrivateKey}`).toBe("[redacted]");
  expect(c.sweeps.enabled).toBe(false);
  expect(c.sweeps.batchSize).toBe(20);
  expect(JSON.stringify(c.sweeps)).not.toContain("abab");
  expect(Bun.inspect(c)).not.toContain("abab");
  let err: unknown;
  try {
    loadConfig({ SERVICE_RELAYER_PRIVATE_KEY: "0x1234", SERVICE_SWEEP_BATCH_SIZE: "0", SERVICE_SWEEP_MAX_ATTEMPTS: "x" });
  } catch (e) {
    err = e;
  }
  const problems = (err as ConfigError).problems;
  expect(problems.length).toBe(3);
  expect(problems.join("\n")).not.toContain("0x1234");
  expect(problems.some((p) => p.startsWith("SERVICE_RELAYER_PRIVATE_KEY"))).toBe(true);
});

test("a production refund from the dashboard asks for the password above SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE (default 500.00)", () => {
  expect(loadConfig({}).dashboard.refundPasswordAboveMinor).toBe(50_000n);
  expect(loadConfig({ SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE: "25.50" }).dashboard.refundPasswordAboveMinor).toBe(2550n);
  expect(() => loadConfig({ SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE: "lots" })).toThrow(/SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE/);
});

test("SERVICE_TRUSTED_PROXIES: empty by default (nobody trusted); each bad entry named on its own line", () => {
  expect(loadConfig({}).trustedProxies.empty).toBe(true);
  const c = loadConfig({ SERVICE_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1, ::1, fd00::/8" });
  expect(c.trustedProxies.entries).toEqual(["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8"]);
  expect(c.trustedProxies.isTrusted("10.20.30.40")).toBe(true);
  expect(c.trustedProxies.isTrusted("203.0.113.7")).toBe(false);
  let err: unknown;
  try {
    loadConfig({ SERVICE_TRUSTED_PROXIES: "10.0.0.0/33, 127.0.0.1, proxy.internal" });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).problems).toEqual([
    `SERVICE_TRUSTED_PROXIES: "10.0.0.0/33": the prefix length must be a whole number 0..32`,
    `SERVICE_TRUSTED_PROXIES: "proxy.internal" is not an IPv4 or IPv6 address or CIDR (like 10.0.0.0/8, 127.0.0.1, fd00::/8; no ports, brackets or zone ids)`,
  ]);
});
