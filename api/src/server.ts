/**
 * Boots the service: database (DATABASE_URL or an embedded Postgres under the data dir),
 * migrations, the HTTP server, housekeeping. Returned `stop()` undoes it in reverse.
 * Used by main.ts, the tests and the benchmarks alike.
 */
import { join } from "node:path";
import type { Config } from "./config.ts";
import { connect, type Database } from "./db/client.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./db/embedded.ts";
import { migrate } from "./db/migrate.ts";
import { buildApp, type Face } from "./http/app.ts";
import { dashboardRoutes } from "./dashboard/routes/index.ts";
import { DASHBOARD_PAGES } from "./dashboard/request.ts";
import { REFUND_PAGES, refundPageRoutes } from "./refund-page/routes.ts";
import { payPages, paymentPageRoutes } from "./payment-page/routes.ts";
import { REFERENCE_PATH } from "./http/api-reference/routes.ts";
import { purgeExpiredIdempotencyKeys } from "./credentials/idempotency-keys.ts";
import type { Services } from "./http/services.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { watchLoopStalls } from "./http/loop-stalls.ts";
import { Faucet } from "./sandbox/faucet.ts";
import type { NetworkConfig } from "../../shared/chains/config.ts";
import { resolveEncryptionKey } from "./credentials/encryption-key.ts";
import type { Resolver } from "./webhooks/target.ts";
import { WebhookWorker } from "./webhooks/worker.ts";
import { SessionRunner } from "./sessions/runner.ts";
import { RunnerThread } from "./sessions/runner-thread.ts";
import { relayerAddressOn, relayerKeysFor } from "./credentials/relayer.ts";
import { NetworkReadiness } from "./onchain/network-status.ts";
import type { Address } from "viem";
import { startSweeper, type Sweeper } from "./sweeps/sweeper.ts";
import { serveApp } from "./http/serve.ts";
import { HttpMetrics, MetricsRegistry } from "./http/metrics.ts";
import { Outage } from "./db/outage.ts";
import { createGroup } from "./sessions/create/group.ts";
import { KeyMemo } from "./credentials/key-memo.ts";
import { apiKeyLookups } from "./credentials/store.ts";
import { NodePresence } from "./nodes/presence.ts";
import { ALIVE_MS, BEAT_MS, thisNode, type NodeRole } from "./nodes/registry.ts";
import { purgeFullBuckets } from "./http/payer-limit.ts";
import { describeError } from "../../shared/describe-error.ts";
import { mailModeLine, mailModeOf, smtpWhere } from "./mail/mode.ts";
import { startMailCatcher, type MailCatcher } from "./mail/catcher.ts";
import { MailWorker } from "./mail/worker.ts";
import { purgeOldMail } from "./mail/outbox.ts";

/** The faces served beside the API by this process (http/app.ts mounts them). */
export function facesFor(services: Services): Face[] {
  return [
    { routes: () => dashboardRoutes(services), pages: DASHBOARD_PAGES },
    { routes: () => refundPageRoutes(services), pages: REFUND_PAGES },
    { routes: () => paymentPageRoutes(services), pages: payPages(services.config) },
  ];
}

export interface RunningService {
  url: string;
  swaggerUrl: string;
  databaseUrl: string;
  services: Services;
  /** The webhook delivery worker of this process, unless SERVICE_WEBHOOK_WORKER=false. */
  worker: WebhookWorker | undefined;
  /** The session actor runner of this process when it shares the API's thread (SERVICE_RUNNER_THREAD=false); unless SERVICE_SESSION_RUNNER=false or no network is enabled. */
  runner: SessionRunner | undefined;
  /** The mail catcher of this process (no SERVICE_SMTP_URL and only sandbox networks; mail/mode.ts). */
  mailCatcher: MailCatcher | undefined;
  /** The mail worker of this process, unless mail is off. */
  mailWorker: MailWorker | undefined;
  /** The sweeper of this process, once started (SERVICE_SWEEPER and at least one network). */
  readonly sweeper: Sweeper | undefined;
  /**
   * Starts the sweeper for these networks unless SERVICE_SWEEPER=false, there are none, or it
   * runs already (main.ts calls it once the chain side is up: the dev chain's RPC URL is only
   * known then). Throws when a production network has no SERVICE_RELAYER_PRIVATE_KEY.
   */
  startSweeper(networks: readonly NetworkConfig[]): Promise<Sweeper | undefined>;
  /**
   * Stops taking HTTP work (new requests: 503 + Connection: close) and waits for the requests
   * in flight, at most SERVICE_SHUTDOWN_GRACE_MS; then the listener is closed. stop() does it too.
   */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** DNS for webhook URLs (tests). */
  resolver?: Resolver;
  /** TLS settings for webhook deliveries (tests: a private CA). */
  webhookTls?: { ca?: string };
  /** Enabled networks (shared/chains): sessions get deposit addresses on them, and the session
   * runner and the sweeper work on them. None: sessions cannot be created. */
  networks?: NetworkConfig[];
  /** Their readiness (main.ts seeds it with the boot's probes); default: probed on demand. */
  readiness?: NetworkReadiness;
  /** This process also sits at the indexer (main.ts): the registry shows the role. */
  indexerRole?: boolean;
}

/** The relayer's address on a network: the configured key's, or on sandbox the dev key's. */
export function relayerAddressFor(config: Config, networks: readonly NetworkConfig[]): (chainId: number) => Address | undefined {
  const key = config.sweeps.relayerPrivateKey?.reveal();
  return (chainId) => {
    const net = networks.find((n) => n.chainId === chainId);
    return net ? relayerAddressOn(net, key) : undefined;
  };
}

const HOUSEKEEPING_EVERY_MS = 60 * 60 * 1000;

export async function startService(config: Config, log: (line: string) => void = () => {}, options: StartOptions = {}): Promise<RunningService> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    // Supervised: restarted (with backoff) should its server process die; logged once per outage.
    embedded = await startEmbeddedPostgres({ dataDir: join(config.dataDir, "pg"), port: config.embeddedPgPort, maxConnections: config.embeddedPgMaxConnections, log });
    databaseUrl = embedded.url;
    log(`embedded Postgres on 127.0.0.1:${config.embeddedPgPort}, data in ${join(config.dataDir, "pg")}`);
  }
  let database: Database | undefined;
  let groupedDatabase: Database | undefined;
  let worker: WebhookWorker | undefined;
  let runner: SessionRunner | undefined;
  let runnerDatabase: Database | undefined;
  let runnerThread: RunnerThread | undefined;
  let sweeper: Sweeper | undefined;
  let readiness: NetworkReadiness | undefined;
  let presence: NodePresence | undefined;
  let loopStalls: ReturnType<typeof watchLoopStalls> | undefined;
  let mailCatcher: MailCatcher | undefined;
  let mailWorker: MailWorker | undefined;
  const startSweeperFor = async (networks: readonly NetworkConfig[]): Promise<Sweeper | undefined> => {
    if (sweeper || !config.sweeps.enabled || networks.length === 0 || !database) return sweeper;
    sweeper = await startSweeper({
      sql: database.sql,
      networks,
      relayerKeys: relayerKeysFor(networks, config.sweeps.relayerPrivateKey?.reveal()),
      settings: config.sweeps,
      refunds: { maxPerDayMinor: config.refunds.maxPerDayMinor, maxPerRefundMinor: config.refunds.maxPerRefundMinor },
      log,
    });
    return sweeper;
  };
  try {
    const encryption = resolveEncryptionKey(config.encryptionKey, config.dataDir);
    if (encryption.created) log(`made a webhook-secret encryption key in ${encryption.file} (production: set SERVICE_ENCRYPTION_KEY)`);
    database = connect(databaseUrl, {
      max: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
    });
    // The grouped statements on connections of their own, one per batch that can be out (creates
    // 1, key lookups 2), which keep one plan per statement (shared/postgres-settings.ts, KEPT_PLANS).
    groupedDatabase = connect(databaseUrl, {
      max: 3,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      plans: "kept",
    });
    const applied = await migrate(database.sql);
    if (applied.length) log(`applied migrations: ${applied.join(", ")}`);
    const networks = options.networks ?? [];
    // In the node registry from here on: the other API processes count this one in their share
    // of the per-key limit, and `admin nodes` shows it.
    const roles: NodeRole[] = ["api"];
    if (config.runner.enabled && networks.length > 0) roles.push("actors");
    if (config.sweeps.enabled && networks.length > 0) roles.push("sweeper");
    if (config.webhooks.worker) roles.push("webhooks");
    if (options.indexerRole) roles.push("indexer");
    presence = new NodePresence(database.sql, thisNode(roles), log);
    await presence.start();
    const nodePresence = presence;
    readiness =
      options.readiness ??
      new NetworkReadiness(networks, { relayerFor: relayerAddressFor(config, networks), refreshMs: config.networkCheckMs, log });
    readiness.start();
    // The limiter gives requests that waited through a stall of this loop what they were owed —
    // up to when the other API processes stop counting this one (its last beat ALIVE_MS old).
    loopStalls = watchLoopStalls(ALIVE_MS - BEAT_MS);
    // Mail: the operator's SMTP server, else (sandbox only) a catcher of our own, else off.
    const mailMode = mailModeOf(config.mail, networks.some((n) => n.environment === "production"));
    if (mailMode === "catcher") mailCatcher = await startMailCatcher(join(config.dataDir, "mail"), config.mail.catcherPort);
    const smtpUrl = mailMode === "smtp" ? config.mail.smtpUrl!.reveal() : mailCatcher?.url;
    log(mailModeLine(mailMode, mailMode === "catcher" ? `${mailCatcher!.url}, ${mailCatcher!.dir}` : smtpUrl ? smtpWhere(smtpUrl) : ""));
    if (smtpUrl) {
      mailWorker = new MailWorker({ sql: database.sql, encryptionKey: encryption.key, smtpUrl, from: config.mail.from, dashboardUrl: new URL("dashboard", config.publicUrl).href, log });
      await mailWorker.start();
    }
    // The services bag of the HTTP layer: the process's parts, made here where they live.
    const services: Services = {
      config,
      database,
      encryptionKey: encryption.key,
      resolver: options.resolver,
      networks,
      readiness,
      faucet: new Faucet(database.sql),
      limiter: new RateLimiter(config.rateLimit.perSecond, config.rateLimit.burst, () => nodePresence.apiNodes, loopStalls.stalls),
      presence: nodePresence,
      keyTouchedAt: new Map(),
      apiKeys: apiKeyLookups(groupedDatabase.sql),
      keyMemo: new KeyMemo(),
      creates: createGroup(groupedDatabase.sql),
      mailMode,
    };
    if (config.webhooks.worker) {
      worker = new WebhookWorker({
        sql: database.sql,
        encryptionKey: encryption.key,
        settings: config.webhooks,
        log,
        resolver: options.resolver,
        tls: options.webhookTls,
      });
      await worker.start();
    }
    if (config.runner.enabled && services.networks.length > 0) {
      // Connections of its own (as many as it steps at once, its scan and its LISTEN): a
      // payment's detection never queues behind the requests' statements on a busy pool; and by
      // default a thread of its own, so it never waits behind the requests' JavaScript either
      // (runner-thread.ts; bench/detection.ts at 1,000 creates/s).
      const pool = { max: config.runner.concurrency + 1, connectTimeoutMs: config.dbConnectTimeoutMs, statementTimeoutMs: config.dbStatementTimeoutMs };
      const { pollMs, concurrency } = config.runner;
      if (config.runner.thread) {
        runnerThread = await RunnerThread.start({ databaseUrl, pool, networks: services.networks, settings: { pollMs, concurrency } }, log);
      } else {
        runnerDatabase = connect(databaseUrl, pool);
        runner = new SessionRunner(runnerDatabase.sql, services.networks, { pollMs, concurrency }, log);
        await runner.start();
      }
    }
    if (options.networks) await startSweeperFor(options.networks);
    const app = buildApp(services, facesFor(services));
    const httpMetrics = new HttpMetrics();
    httpMetrics.setRoutes(app.routes);
    services.metrics = new MetricsRegistry({
      sql: database.sql,
      readiness,
      http: httpMetrics,
      webhookStats: () => worker?.stats,
      groups: { creates: services.creates.stats, api_key_lookups: services.apiKeys.stats },
    });
    const front = serveApp(app, {
      port: config.port,
      hostname: config.bindHost,
      requestTimeoutMs: config.requestTimeoutMs,
      metrics: httpMetrics,
      trustedProxies: config.trustedProxies,
    });
    const server = front.server;
    const url = `http://${config.bindHost}:${server.port}`;
    // Housekeeping only: a skipped run loses nothing, the next one catches up. During a
    // database outage it says so once, not every hour.
    const purgeOutage = new Outage("housekeeping purge", log);
    const housekeeping = setInterval(() => {
      Promise.all([purgeExpiredIdempotencyKeys(database!.sql), purgeFullBuckets(database!.sql), purgeOldMail(database!.sql)]).then(
        () => purgeOutage.ok(),
        (e) => {
          if (purgeOutage.failed(e) === undefined) log(`housekeeping purge (idempotency keys, rate buckets, old mail) failed: ${describeError(e)}`);
        },
      );
    }, HOUSEKEEPING_EVERY_MS);
    housekeeping.unref();
    let drained: Promise<void> | undefined;
    return {
      url,
      swaggerUrl: `${url}${REFERENCE_PATH}`,
      databaseUrl,
      services,
      worker,
      runner,
      mailCatcher,
      mailWorker,
      get sweeper() {
        return sweeper;
      },
      startSweeper: startSweeperFor,
      drain: () => (drained ??= front.drain(config.shutdownGraceMs)),
      async stop() {
        // HTTP first (in-flight requests finish, new ones get 503), then the loops (they
        // hand back what they claimed), then the pool, then Postgres.
        await (drained ??= front.drain(config.shutdownGraceMs));
        clearInterval(housekeeping);
        loopStalls?.stop();
        readiness?.stop();
        await runner?.stop();
        await runnerDatabase?.close();
        await runnerThread?.stop();
        await sweeper?.stop();
        await worker?.stop();
        await mailWorker?.stop();
        await mailCatcher?.stop();
        await presence?.stop();
        await groupedDatabase?.close();
        await database!.close();
        await embedded?.stop();
      },
    };
  } catch (err) {
    loopStalls?.stop();
    readiness?.stop();
    await runner?.stop().catch(() => {});
    await runnerDatabase?.close().catch(() => {});
    await runnerThread?.stop().catch(() => {});
    await sweeper?.stop().catch(() => {});
    await worker?.stop().catch(() => {});
    await mailWorker?.stop().catch(() => {});
    await mailCatcher?.stop().catch(() => {});
    await presence?.stop().catch(() => {});
    await groupedDatabase?.close().catch(() => {});
    await database?.close().catch(() => {});
    await embedded?.stop().catch(() => {});
    throw err;
  }
}
