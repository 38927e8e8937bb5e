/**
 * Every setting comes from the environment, is validated once at boot, and each bad or
 * missing value gets its own line in one error (so an operator fixes them all in one go).
 * `.env.example` documents each variable; keep the two in step.
 */
import { parseAmount } from "../../shared/money.ts";
import { DEFAULT_RETRY_SCHEDULE, parseSchedule } from "./retry-schedule.ts";
import { BaseError } from "../../shared/base-error.ts";
import { parseTrustedProxies, TrustedProxies } from "./trusted-proxies.ts";

export interface Config {
  port: number;
  bindHost: string;
  /**
   * SERVICE_TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For is believed (trusted-proxies.ts).
   * Empty (the default): none; every request's client address is its socket peer.
   */
  trustedProxies: TrustedProxies;
  publicUrl: URL;
  sandboxPublicUrl: URL;
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number;
  /** max_connections of the embedded Postgres (SERVICE_EMBEDDED_PG_MAX_CONNECTIONS). */
  embeddedPgMaxConnections: number;
  dbPoolSize: number;
  /** A Postgres connection attempt gives up after this (then 503, loops back off). */
  dbConnectTimeoutMs: number;
  /** Postgres statement_timeout per connection (0: none). */
  dbStatementTimeoutMs: number;
  /** Every HTTP request answers within this: past it, 503 service_unavailable + Retry-After. */
  requestTimeoutMs: number;
  /** On SIGTERM, requests in flight get this long to finish. */
  shutdownGraceMs: number;
  /** SERVICE_METRICS_TOKEN: when set, GET /metrics takes `Authorization: Bearer <it>`. */
  metricsToken: RedactedSecret | undefined;
  rateLimit: { perSecond: number; burst: number };
  sessionDefaultExpirySeconds: number;
  sessionMinExpirySeconds: number;
  sessionMaxExpirySeconds: number;
  /** How long a session token outlives its session's expiry, so a payer can still see the outcome. */
  sessionTokenGraceSeconds: number;
  minAmountMinor: bigint;
  maxAmountMinor: bigint;
  /** The smallest x402 payment (docs/x402.md): a session of its own, usually a few cents, so below minAmountMinor. */
  x402MinAmountMinor: bigint;
  logRequests: boolean;
  /** Where sandbox funds go for merchants that set no settlement address (lowercase hex). */
  sandboxSettlementAddress: string;
  /** Port of the local anvil that `bun run dev` starts (when SERVICE_RPC_URL_LOCAL is unset). */
  devChainPort: number;
  /** SERVICE_INDEXER: true or standby (a candidate for the indexer lease), false. */
  indexerEnabled: boolean;
  indexerPort: number;
  indexerReadyTimeoutMs: number;
  /** 32 bytes that seal webhook secrets, Idempotency-Key records and flash cookies; undefined: read or made once under the data dir (dev). */
  encryptionKey: Buffer | undefined;
  webhooks: WebhookSettings;
  /** The session actor runner (api/src/sessions/runner.ts). */
  runner: { enabled: boolean; pollMs: number; concurrency: number; thread: boolean };
  sweeps: SweepConfig;
  /** Refunds' spend guards (docs/refunds.md, "Spend guards"), in minor units. */
  refunds: RefundSettings;
  /** Payment links' public page (docs/payment-links.md). */
  paymentLinks: {
    /** Payments one client address may start from payment-link pages per hour (SERVICE_PAYMENT_LINK_STARTS_PER_HOUR), in a shared bucket; past it the page answers 429. */
    startsPerHour: number;
  };
  /** How often each network's readiness (factory, token, relayer balance) is re-checked. */
  networkCheckMs: number;
  /**
   * The merchant dashboard (api/src/dashboard/): whether anyone may create an account there
   * (SERVICE_DASHBOARD_SIGNUP), and above which amount a production refund made there asks for
   * the person's password again (SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE, in minor units).
   */
  dashboard: { signUp: boolean; refundPasswordAboveMinor: bigint };
  /** Outgoing mail (mail/): invitations, password resets, security notices. */
  mail: MailSettings;
}

/**
 * Where mail goes. With `smtpUrl` (SERVICE_SMTP_URL, smtp:// or smtps://, credentials in it), to
 * that server. Without it, a service with only sandbox networks keeps its mail in a catcher of its
 * own (an SMTP server in the process on 127.0.0.1, SERVICE_DEV_MAIL_PORT, 0: any free port, each
 * mail a file under <data dir>/mail and in the sandbox dashboard's Outbox); a service with a
 * production network sends none and refuses what needs it (mail/transport.ts).
 */
export interface MailSettings {
  smtpUrl: RedactedSecret | undefined;
  /** The From of every mail (SERVICE_MAIL_FROM). */
  from: string;
  catcherPort: number;
}

/** The sweeper's knobs (sweeps/sweeper.ts). */
export interface SweepSettings {
  /** Queued sweeps per transaction (deposits of one token). */
  batchSize: number;
  /** Failed attempts after which a sweep is `failed` (its session then goes to ERROR). */
  maxAttempts: number;
  /** A transaction not mined after this long is re-signed with the same nonce and higher fees. */
  stuckMs: number;
  /** Longest pause between two looks at the table and the chain (NOTIFY wakes it sooner). */
  pollMs: number;
  /** Wait after the first failed attempt; doubled after each further one (max 1 h), ± 20 %. */
  retryBaseMs: number;
  /**
   * The relayer-spend guard (sweeps/guard.ts): at most this many new relayer transactions per
   * network in any minute and any hour (past it, sweeps wait, recorded, and the operator is
   * told), and at most this many for one session on one network (past it, its sweep fails
   * with the guard's reason instead of paying again).
   */
  maxTxPerMinute: number;
  maxTxPerHour: number;
  maxTxPerSession: number;
}

/** The refunds' spend guards (refunds/, docs/refunds.md): in minor units (cents) of the session's currency. */
export interface RefundSettings {
  /** The largest refund created at all (SERVICE_REFUND_MAX_PER_REFUND): above it, `amount_too_large`. */
  maxPerRefundMinor: bigint;
  /** The most one merchant's refunds send per environment in any 24 hours (SERVICE_REFUND_MAX_PER_DAY): past it, refunds wait. */
  maxPerDayMinor: bigint;
  /** Claims one refund link may take (SERVICE_REFUND_CLAIMS_PER_HOUR): a shared bucket of this many per link, refilled over an hour. */
  claimsPerHour: number;
}

export interface SweepConfig extends SweepSettings {
  /** Run the sweeper inside the API process. */
  enabled: boolean;
  /**
   * SERVICE_RELAYER_PRIVATE_KEY (0x + 64 hex), or undefined (sandbox networks then use the dev
   * key). Wrapped so that printing or serializing the config never shows it: `.reveal()`.
   */
  relayerPrivateKey: RedactedKey | undefined;
}

/** The embedded Postgres's address on `port` (db/embedded.ts serves it there). */
export function embeddedDatabaseUrl(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
}

/** DATABASE_URL, or the embedded Postgres of the data dir (the one `bun run dev` runs): what every role process connects to. */
export function databaseUrlOf(config: Config): string {
  return config.databaseUrl ?? embeddedDatabaseUrl(config.embeddedPgPort);
}

/** A secret that prints as "[redacted]" (console.log, Bun.inspect, JSON, template strings). */
export class RedactedSecret<T extends string = string> {
  readonly #value: T;
  constructor(value: T) {
    this.#value = value;
  }
  reveal(): T {
    return this.#value;
  }
  toString(): string {
    return "[redacted]";
  }
  toJSON(): string {
    return "[redacted]";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "[redacted]";
  }
}

/** A private key (0x…) that prints as "[redacted]". */
export class RedactedKey extends RedactedSecret<`0x${string}`> {}

export interface WebhookSettings {
  /** Run the delivery worker inside this process. */
  worker: boolean;
  /** Wait after each failed attempt, in ms; the last entry used up means the delivery failed. */
  retrySchedule: number[];
  timeoutMs: number;
  /** Deliveries in flight per process, overall and per endpoint. */
  concurrency: number;
  endpointConcurrency: number;
  /** Longest sleep between two looks at the table when no NOTIFY came. */
  pollMs: number;
  /** A claimed delivery not finished by then (its process died) is due again. */
  leaseMs: number;
  /**
   * Sandbox webhooks may go to loopback, private, unique-local and CGNAT addresses
   * (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS; off unless set; `bun run dev` turns it on).
   * Production webhooks never do.
   */
  allowPrivateTargets: boolean;
}

/**
 * Production (a production network enabled) needs SERVICE_ENCRYPTION_KEY: a key file made in
 * the data directory would be lost with that directory, and with it every webhook secret.
 */
export function encryptionKeyProblems(productionNetworks: readonly string[], key: Buffer | undefined): string[] {
  if (key || productionNetworks.length === 0) return [];
  return [
    `SERVICE_ENCRYPTION_KEY is required when a production network is enabled (${productionNetworks.join(", ")}): ` +
      "it seals the webhook signing secrets stored in the database. Make one with `openssl rand -base64 32`, keep it in your " +
      "secret store and back it up with the database: without it the stored secrets cannot be opened and every webhook endpoint's secret must be rotated",
  ];
}

/** 64 hex characters or base64 of 32 bytes. */
export function parseEncryptionKey(raw: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, "hex");
  if (/^[A-Za-z0-9+/]{43}=?$/.test(raw)) {
    const b = Buffer.from(raw, "base64");
    if (b.length === 32) return b;
  }
  return undefined;
}

export class ConfigError extends BaseError {
  override name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

type Env = Record<string, string | undefined>;

/** anvil's account #1 (public test key): sandbox funds stay visible on the local network. */
export const DEFAULT_SANDBOX_SETTLEMENT = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => {
    const v = env[name];
    return v === undefined || v === "" ? fallback : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name, String(fallback));
    if (!/^[0-9]+$/.test(raw)) {
      problems.push(`${name}: "${raw}" is not a whole number`);
      return fallback;
    }
    const n = Number(raw);
    if (n < min || n > max) {
      problems.push(`${name}: ${n} is outside ${min}..${max}`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string): URL => {
    const raw = str(name, fallback);
    try {
      const u = new URL(raw);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
      return u;
    } catch {
      problems.push(`${name}: "${raw}" is not an http(s) URL`);
      return new URL(fallback);
    }
  };
  const amount = (name: string, fallback: string): bigint => {
    const raw = str(name, fallback);
    const parsed = parseAmount(raw);
    if (!parsed.ok) {
      problems.push(`${name}: "${raw}" is not an amount like "1.00"`);
      return 0n; // never used: loadConfig throws below
    }
    return parsed.minor;
  };
  const address = (name: string, fallback: string): string => {
    const raw = str(name, fallback);
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw) || /^0x0{40}$/.test(raw)) {
      problems.push(`${name}: "${raw}" is not a non-zero 0x address`);
      return fallback;
    }
    return raw.toLowerCase();
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name, String(fallback)).toLowerCase();
    if (["1", "true", "yes"].includes(raw)) return true;
    if (["0", "false", "no"].includes(raw)) return false;
    problems.push(`${name}: "${raw}" is not true or false`);
    return fallback;
  };

  const port = int("SERVICE_PORT", 4000, 0, 65535);
  const publicUrl = url("SERVICE_PUBLIC_URL", `http://localhost:${port}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL: must start with postgres:// or postgresql://`);
  }
  const config: Config = {
    port,
    bindHost: str("SERVICE_BIND_HOST", "127.0.0.1"),
    trustedProxies: TrustedProxies.NONE,
    publicUrl,
    sandboxPublicUrl: url("SERVICE_SANDBOX_PUBLIC_URL", publicUrl.toString()),
    databaseUrl,
    dataDir: str("SERVICE_DATA_DIR", ".data"),
    embeddedPgPort: int("SERVICE_EMBEDDED_PG_PORT", 54329, 1, 65535),
    embeddedPgMaxConnections: int("SERVICE_EMBEDDED_PG_MAX_CONNECTIONS", 300, 10, 10_000),
    dbPoolSize: int("SERVICE_DB_POOL_SIZE", 20, 1, 500),
    dbConnectTimeoutMs: int("SERVICE_DB_CONNECT_TIMEOUT_MS", 2000, 100, 60_000),
    dbStatementTimeoutMs: int("SERVICE_DB_STATEMENT_TIMEOUT_MS", 5000, 0, 3_600_000),
    requestTimeoutMs: int("SERVICE_REQUEST_TIMEOUT_MS", 5000, 100, 600_000),
    shutdownGraceMs: int("SERVICE_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    metricsToken: undefined,
    rateLimit: {
      perSecond: int("SERVICE_RATE_LIMIT_PER_SECOND", 100, 1, 1_000_000),
      burst: int("SERVICE_RATE_LIMIT_BURST", 200, 1, 1_000_000),
    },
    sessionDefaultExpirySeconds: int("SERVICE_SESSION_EXPIRY_SECONDS", 1800, 60, 604800),
    sessionMinExpirySeconds: 60,
    sessionMaxExpirySeconds: 86400,
    sessionTokenGraceSeconds: int("SERVICE_SESSION_TOKEN_GRACE_SECONDS", 3600, 0, 604800),
    minAmountMinor: amount("SERVICE_MIN_AMOUNT", "0.50"),
    maxAmountMinor: amount("SERVICE_MAX_AMOUNT", "1000000.00"),
    x402MinAmountMinor: amount("SERVICE_X402_MIN_AMOUNT", "0.01"),
    logRequests: bool("SERVICE_LOG_REQUESTS", false),
    sandboxSettlementAddress: address("SERVICE_SANDBOX_SETTLEMENT_ADDRESS", DEFAULT_SANDBOX_SETTLEMENT),
    devChainPort: int("SERVICE_DEV_CHAIN_PORT", 8545, 1, 65535),
    // `standby` names a second indexer node: every node with the indexer on is a candidate, the one
    // holding the lease indexes and the others wait to take over (nodes/indexer-seat.ts).
    indexerEnabled: str("SERVICE_INDEXER", "true").toLowerCase() === "standby" || bool("SERVICE_INDEXER", true),
    indexerPort: int("SERVICE_INDEXER_PORT", 42069, 1, 65535),
    indexerReadyTimeoutMs: int("SERVICE_INDEXER_READY_TIMEOUT_SECONDS", 120, 1, 86400) * 1000,
    encryptionKey: undefined,
    networkCheckMs: int("SERVICE_NETWORK_CHECK_SECONDS", 30, 1, 3600) * 1000,
    dashboard: { signUp: bool("SERVICE_DASHBOARD_SIGNUP", false), refundPasswordAboveMinor: amount("SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE", "500.00") },
    mail: { smtpUrl: undefined, from: str("SERVICE_MAIL_FROM", "Paysession <no-reply@localhost>"), catcherPort: int("SERVICE_DEV_MAIL_PORT", 0, 0, 65535) },
    runner: {
      enabled: bool("SERVICE_SESSION_RUNNER", true),
      pollMs: int("SERVICE_RUNNER_POLL_MS", 50, 5, 60_000),
      concurrency: int("SERVICE_RUNNER_CONCURRENCY", 8, 1, 256),
      thread: bool("SERVICE_RUNNER_THREAD", true),
    },
    webhooks: {
      worker: bool("SERVICE_WEBHOOK_WORKER", true),
      retrySchedule: [],
      timeoutMs: int("SERVICE_WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
      concurrency: int("SERVICE_WEBHOOK_CONCURRENCY", 256, 1, 10_000),
      endpointConcurrency: int("SERVICE_WEBHOOK_ENDPOINT_CONCURRENCY", 16, 1, 1000),
      pollMs: int("SERVICE_WEBHOOK_POLL_MS", 1000, 10, 60_000),
      leaseMs: int("SERVICE_WEBHOOK_LEASE_MS", 60_000, 1000, 3_600_000),
      allowPrivateTargets: bool("SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS", false),
    },
    refunds: {
      maxPerRefundMinor: amount("SERVICE_REFUND_MAX_PER_REFUND", "10000.00"),
      maxPerDayMinor: amount("SERVICE_REFUND_MAX_PER_DAY", "50000.00"),
      claimsPerHour: int("SERVICE_REFUND_CLAIMS_PER_HOUR", 20, 1, 100_000),
    },
    paymentLinks: {
      startsPerHour: int("SERVICE_PAYMENT_LINK_STARTS_PER_HOUR", 30, 1, 100_000),
    },
    sweeps: {
      enabled: bool("SERVICE_SWEEPER", true),
      batchSize: int("SERVICE_SWEEP_BATCH_SIZE", 50, 1, 500),
      maxAttempts: int("SERVICE_SWEEP_MAX_ATTEMPTS", 5, 1, 100),
      stuckMs: int("SERVICE_SWEEP_STUCK_SECONDS", 120, 1, 86_400) * 1000,
      pollMs: int("SERVICE_SWEEP_POLL_MS", 1000, 10, 60_000),
      retryBaseMs: int("SERVICE_SWEEP_RETRY_BASE_SECONDS", 30, 1, 86_400) * 1000,
      maxTxPerMinute: int("SERVICE_SWEEP_MAX_TX_PER_MINUTE", 120, 1, 100_000),
      maxTxPerHour: int("SERVICE_SWEEP_MAX_TX_PER_HOUR", 3600, 1, 1_000_000),
      maxTxPerSession: int("SERVICE_SWEEP_MAX_TX_PER_SESSION", 8, 1, 1000),
      relayerPrivateKey: undefined,
    },
  };
  const trusted = parseTrustedProxies(str("SERVICE_TRUSTED_PROXIES", ""));
  config.trustedProxies = trusted.proxies;
  for (const p of trusted.problems) problems.push(`SERVICE_TRUSTED_PROXIES: ${p}`);
  const rawRelayerKey = str("SERVICE_RELAYER_PRIVATE_KEY", "").trim();
  if (rawRelayerKey) {
    if (/^0x[0-9a-fA-F]{64}$/.test(rawRelayerKey) && !/^0x0{64}$/.test(rawRelayerKey)) {
      config.sweeps.relayerPrivateKey = new RedactedKey(rawRelayerKey as `0x${string}`);
    } else problems.push(`SERVICE_RELAYER_PRIVATE_KEY: must be 0x followed by 64 hex characters (a secp256k1 private key)`);
  }
  const rawMetricsToken = str("SERVICE_METRICS_TOKEN", "").trim();
  if (rawMetricsToken) {
    if (rawMetricsToken.length >= 16 && /^[\x21-\x7e]+$/.test(rawMetricsToken)) config.metricsToken = new RedactedSecret(rawMetricsToken);
    else problems.push(`SERVICE_METRICS_TOKEN: must be at least 16 printable characters without spaces (openssl rand -hex 24)`);
  }
  const rawSmtp = str("SERVICE_SMTP_URL", "").trim();
  if (rawSmtp) {
    if (/^smtps?:\/\/[^/\s]+/.test(rawSmtp) && URL.canParse(rawSmtp)) config.mail.smtpUrl = new RedactedSecret(rawSmtp);
    else problems.push(`SERVICE_SMTP_URL: must be smtp://[user:password@]host[:port] or smtps://… (the value is not repeated here: it may hold a password)`);
  }
  if (!/^[^\r\n<>]*<[^\s<>@]+@[^\s<>@]+>$|^[^\s<>@]+@[^\s<>@]+$/.test(config.mail.from)) {
    problems.push(`SERVICE_MAIL_FROM: "${config.mail.from.slice(0, 80)}" is not an address like "Shop payments <payments@example.com>" or "payments@example.com"`);
  }
  const rawKey = str("SERVICE_ENCRYPTION_KEY", "");
  if (rawKey) {
    config.encryptionKey = parseEncryptionKey(rawKey);
    if (!config.encryptionKey) problems.push(`SERVICE_ENCRYPTION_KEY: must be 32 bytes as 64 hex characters or base64 (openssl rand -base64 32)`);
  }
  const rawSchedule = str("SERVICE_WEBHOOK_RETRY_SCHEDULE", DEFAULT_RETRY_SCHEDULE);
  const schedule = parseSchedule(rawSchedule);
  if (schedule) config.webhooks.retrySchedule = schedule;
  else problems.push(`SERVICE_WEBHOOK_RETRY_SCHEDULE: "${rawSchedule}" is not a comma-separated list of 1 to 30 durations such as 5s,1m,2h`);
  if (config.webhooks.leaseMs < 2 * config.webhooks.timeoutMs + 500) {
    problems.push(`SERVICE_WEBHOOK_LEASE_MS: must be at least twice SERVICE_WEBHOOK_TIMEOUT_MS plus 500`);
  }
  if (config.minAmountMinor > config.maxAmountMinor) {
    problems.push(`SERVICE_MIN_AMOUNT must not exceed SERVICE_MAX_AMOUNT`);
  }
  if (config.sessionDefaultExpirySeconds > config.sessionMaxExpirySeconds) {
    problems.push(`SERVICE_SESSION_EXPIRY_SECONDS: at most ${config.sessionMaxExpirySeconds}`);
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}
