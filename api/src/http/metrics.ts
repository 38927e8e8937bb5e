/**
 * GET /metrics: Prometheus text exposition format 0.0.4. Aggregates only — no ids, no
 * merchant, no address, no URL, no secret — and labels of bounded cardinality (route
 * templates, status classes, chain ids). Optional bearer token: SERVICE_METRICS_TOKEN.
 *
 * HTTP counters live in memory (per process, reset by a restart, as Prometheus expects);
 * the database figures come from a few aggregate queries, cached for CACHE_MS, so a scrape
 * every few seconds from several scrapers costs one round of queries.
 */
import { indexedHeadBlocks } from "../sessions/indexed.ts";
import { timingSafeEqual, createHash } from "node:crypto";
import { Elysia } from "elysia";
import type { Sql } from "postgres";
import { ApiError } from "../errors.ts";
import type { Config } from "../config.ts";
import type { NetworkReadiness } from "../onchain/network-status.ts";
import { col, decodeFirst, decodeRows, rowShape } from "../db/rows.ts";
import { ALIVE_MS } from "../nodes/registry.ts";
import { INDEXER_LEASE } from "../nodes/lease.ts";
import { SESSION_STATUSES } from "../../../shared/status.ts";
import { DELIVERY_STATES } from "../db/column-values.ts";
import { SWEEP_STATES } from "../sweeps/states.ts";

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CACHE_MS = 5000;
const DB_QUERY_LIMIT_MS = 1000;

interface Series {
  count: number;
  sum: number;
  buckets: number[];
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labels = (l: Record<string, string | number>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${esc(String(v))}"`)
    .join(",")}}`;
const num = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : "NaN");

/** The process's HTTP figures. */
export class HttpMetrics {
  private readonly requests = new Map<string, { method: string; route: string; status: string; n: number }>();
  private readonly latency = new Map<string, { method: string; route: string; s: Series }>();
  private readonly routes: { method: string; path: string; re: RegExp }[] = [];
  inFlight = 0;

  /** The app's routes, to name a request by its template (`/payment-sessions/:id`), never its path. */
  setRoutes(routes: readonly { method: string; path: string }[]): void {
    this.routes.length = 0;
    for (const r of routes) {
      this.routes.push({ method: r.method, path: r.path, re: new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*")}$`) });
    }
  }

  routeOf(method: string, path: string): string {
    const same = this.routes.find((r) => r.method === method && r.re.test(path));
    if (same) return same.path;
    const any = this.routes.find((r) => r.re.test(path));
    return any ? any.path : "unmatched";
  }

  observe(method: string, path: string, status: number, seconds: number): void {
    const m = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"].includes(method) ? method : "other";
    const route = this.routeOf(m, path);
    const cls = `${Math.floor(status / 100)}xx`;
    const rk = `${m} ${route} ${cls}`;
    const r = this.requests.get(rk) ?? { method: m, route, status: cls, n: 0 };
    r.n++;
    this.requests.set(rk, r);
    const lk = `${m} ${route}`;
    const l = this.latency.get(lk) ?? { method: m, route, s: { count: 0, sum: 0, buckets: BUCKETS.map(() => 0) } };
    l.s.count++;
    l.s.sum += seconds;
    BUCKETS.forEach((b, i) => {
      if (seconds <= b) l.s.buckets[i]!++;
    });
    this.latency.set(lk, l);
  }

  render(): string[] {
    const out: string[] = [];
    out.push("# HELP paysession_http_requests_total HTTP requests answered, by method, route template and status class.");
    out.push("# TYPE paysession_http_requests_total counter");
    for (const r of this.requests.values()) out.push(`paysession_http_requests_total${labels({ method: r.method, route: r.route, status: r.status })} ${r.n}`);
    out.push("# HELP paysession_http_request_duration_seconds Time from request received to response ready.");
    out.push("# TYPE paysession_http_request_duration_seconds histogram");
    for (const { method, route, s } of this.latency.values()) {
      BUCKETS.forEach((b, i) => out.push(`paysession_http_request_duration_seconds_bucket${labels({ method, route, le: b })} ${s.buckets[i]}`));
      out.push(`paysession_http_request_duration_seconds_bucket${labels({ method, route, le: "+Inf" })} ${s.count}`);
      out.push(`paysession_http_request_duration_seconds_sum${labels({ method, route })} ${s.sum}`);
      out.push(`paysession_http_request_duration_seconds_count${labels({ method, route })} ${s.count}`);
    }
    out.push("# HELP paysession_http_requests_in_flight Requests being handled now.");
    out.push("# TYPE paysession_http_requests_in_flight gauge");
    out.push(`paysession_http_requests_in_flight ${this.inFlight}`);
    return out;
  }
}

interface DbFigures {
  sessions: { status: string; n: number }[];
  actorLagSeconds: number;
  webhooks: { state: string; n: number }[];
  sweeps: { state: string; n: number }[];
  sweepOldestDueSeconds: number;
  authorizations: { status: string; n: number }[];
  /** Relayer transactions of the last hour per network and kind (sweep, authorization), and the gas coin they cost (ETH units). */
  relayerSpend: { chainId: number; kind: string; n: number; spent: number }[];
  indexerHeads: { chainId: number; block: bigint }[];
  /** Live nodes of the registry per role (nodes/registry.ts), and whether a node holds the indexer seat. */
  nodesByRole: { role: string; n: number }[];
  indexerSeatHeld: boolean;
}

const SessionsByStatus = rowShape("metrics: sessions by status", { status: col.oneOf(SESSION_STATUSES), n: col.int });
const DeliveriesByState = rowShape("metrics: deliveries by state", { state: col.oneOf(DELIVERY_STATES), n: col.int });
const SweepsByState = rowShape("metrics: sweeps by state", { state: col.oneOf(SWEEP_STATES), n: col.int });
/** Seconds, float8 (0 when nothing is late). */
const ActorLag = rowShape("metrics: oldest overdue session wake-up", { s: col.float });
const SweepLag = rowShape("metrics: oldest overdue sweep", { s: col.float });
const AuthorizationCount = rowShape("metrics: authorizations", { status: col.text, n: col.int });
const NodesByRole = rowShape("metrics: live nodes by role", { role: col.text, n: col.int });
const SeatHeld = rowShape("metrics: indexer seat held", { held: col.bool });
const RelayerSpendRow = rowShape("metrics: relayer spend", { chain_id: col.int, kind: col.oneOf(["sweep", "authorization"] as const), n: col.int, spent: col.float }); // spent: the gas coin (ether), a figure for a gauge

async function readDbFigures(sql: Sql): Promise<DbFigures> {
  const [sessions, lag, webhooks, sweeps, sweepLag, authorizations, spend, heads, nodes, seat] = await Promise.all([
    sql`select status, count(*)::int as n from app.payment_sessions group by status`,
    sql`select coalesce(extract(epoch from (now() - min(wake_at))), 0)::float8 as s from app.payment_sessions where wake_at <= now()`,
    sql`select state, count(*)::int as n from app.webhook_deliveries where state in ('waiting', 'pending', 'sending', 'failed') group by state`,
    sql`select state, count(*)::int as n from app.sweeps where state in ('queued', 'sending') group by state`,
    sql`select coalesce(extract(epoch from (now() - min(next_attempt_at))), 0)::float8 as s from app.sweeps where state = 'queued' and next_attempt_at <= now()`,
    sql`select status, count(*)::int as n from app.payment_authorizations where status in ('recorded', 'sending') group by status`,
    // The window of the relayer-spend guard (sweeps/guard.ts): what it counts, and what that cost.
    sql`select chain_id, kind, count(*)::int as n,
               (coalesce(sum(gas_used::numeric * effective_gas_price), 0) / 1e18)::float8 as spent
          from app.sweep_transactions where created_at > now() - interval '1 hour' group by chain_id, kind`,
    indexedHeadBlocks(sql),
    sql`select role, count(*)::int as n from app.nodes, unnest(roles) as role
          where heartbeat_at > now() - ${ALIVE_MS} * interval '1 millisecond' group by role`,
    sql`select exists (select 1 from app.leases where name = ${INDEXER_LEASE} and expires_at > now()) as held`,
  ]);
  return {
    sessions: decodeRows(SessionsByStatus, sessions),
    actorLagSeconds: decodeFirst(ActorLag, lag)?.s ?? 0,
    webhooks: decodeRows(DeliveriesByState, webhooks),
    sweeps: decodeRows(SweepsByState, sweeps),
    sweepOldestDueSeconds: decodeFirst(SweepLag, sweepLag)?.s ?? 0,
    authorizations: decodeRows(AuthorizationCount, authorizations),
    relayerSpend: decodeRows(RelayerSpendRow, spend).map((r) => ({ chainId: r.chain_id, kind: r.kind, n: r.n, spent: r.spent })),
    indexerHeads: [...heads].map(([chainId, block]) => ({ chainId, block })),
    nodesByRole: decodeRows(NodesByRole, nodes),
    indexerSeatHeld: decodeFirst(SeatHeld, seat)?.held ?? false,
  };
}

export interface MetricsSources {
  sql: Sql;
  readiness: NetworkReadiness;
  http: HttpMetrics;
  /** This process's webhook worker's counters, when it runs one. */
  webhookStats?: () => { succeeded: number; failedAttempts: number } | undefined;
  /** Group commit (db/group.ts) of this process: batches and the items in them, by group. */
  groups?: Record<string, { batches: number; items: number }>;
}

export class MetricsRegistry {
  private cached: { at: number; figures: DbFigures } | undefined;
  private reading: Promise<DbFigures> | undefined;

  constructor(private readonly src: MetricsSources) {}

  private async dbFigures(): Promise<DbFigures | undefined> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.figures;
    this.reading ??= readDbFigures(this.src.sql).finally(() => (this.reading = undefined));
    const p = this.reading.then((figures) => {
      this.cached = { at: Date.now(), figures };
      return figures;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), DB_QUERY_LIMIT_MS)));
    try {
      return await Promise.race([p, limit]);
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  async render(): Promise<string> {
    const out = this.src.http.render();
    const db = await this.dbFigures();
    const gauge = (name: string, help: string, rows: [Record<string, string | number>, number][]) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const [l, v] of rows) out.push(`${name}${Object.keys(l).length ? labels(l) : ""} ${num(v)}`);
    };
    gauge("paysession_database_up", "1 when the aggregate queries below answered (within 1 s), else 0.", [[{}, db ? 1 : 0]]);
    if (db) {
      gauge("paysession_sessions", "Payment sessions by status (both environments).", db.sessions.map((r) => [{ status: r.status }, r.n]));
      gauge("paysession_actor_lag_seconds", "Age of the oldest due session wake-up (0: none due). Grows when no runner keeps up.", [[{}, db.actorLagSeconds]]);
      gauge("paysession_webhook_deliveries", "Webhook deliveries waiting, pending, sending, and failed for good.", db.webhooks.map((r) => [{ state: r.state }, r.n]));
      gauge("paysession_sweeps", "Sweeps queued or sending.", db.sweeps.map((r) => [{ state: r.state }, r.n]));
      gauge("paysession_sweep_oldest_due_seconds", "Age of the oldest queued sweep that is due (0: none).", [[{}, db.sweepOldestDueSeconds]]);
      gauge("paysession_authorizations", "Payers' recorded authorizations waiting for the relayer (recorded) or in a relayer transaction (sending).", db.authorizations.map((r) => [{ status: r.status }, r.n]));
      gauge("paysession_nodes", "Live processes of the service (node registry: a beat within the last 7 s), by role; a process may hold several.", db.nodesByRole.map((r) => [{ role: r.role }, r.n]));
      gauge("paysession_indexer_seat_held", "1 while a node holds the indexer seat (its lease unexpired), 0 while none does: payments are not detected then.", [[{}, db.indexerSeatHeld ? 1 : 0]]);
      gauge(
        "paysession_relayer_transactions_last_hour",
        "Relayer transactions created in the last hour (the relayer-spend guard's count), by network and kind: sweep or authorization.",
        db.relayerSpend.map((r) => [{ chain_id: r.chainId, kind: r.kind }, r.n]),
      );
      gauge(
        "paysession_relayer_gas_spent_last_hour",
        "Native coin (ETH units) the relayer's mined transactions of the last hour cost (gas used × effective gas price), by network and kind.",
        db.relayerSpend.map((r) => [{ chain_id: r.chainId, kind: r.kind }, r.spent]),
      );
    }
    const stats = this.src.webhookStats?.();
    if (stats) {
      out.push("# HELP paysession_webhook_attempts_total Webhook attempts of this process's worker, by outcome.", "# TYPE paysession_webhook_attempts_total counter");
      out.push(`paysession_webhook_attempts_total{outcome="succeeded"} ${stats.succeeded}`, `paysession_webhook_attempts_total{outcome="failed"} ${stats.failedAttempts}`);
    }
    if (this.src.groups) {
      const groups = Object.entries(this.src.groups);
      out.push("# HELP paysession_group_batches_total Statements sent by group commit (items ÷ batches: how many requests shared one).", "# TYPE paysession_group_batches_total counter");
      for (const [group, st] of groups) out.push(`paysession_group_batches_total${labels({ group })} ${st.batches}`);
      out.push("# HELP paysession_group_items_total Requests' items sent by group commit.", "# TYPE paysession_group_items_total counter");
      for (const [group, st] of groups) out.push(`paysession_group_items_total${labels({ group })} ${st.items}`);
    }
    const nets = this.src.readiness.current();
    gauge(
      "paysession_network_ready",
      "1 when sessions are offered on the network.",
      nets.map((n) => [{ chain_id: n.chainId, network: n.key }, n.ready ? 1 : 0]),
    );
    gauge(
      "paysession_relayer_balance",
      "The relayer's native coin balance at the last readiness probe (ETH units).",
      nets.filter((n) => n.relayer.balance !== null).map((n) => [{ chain_id: n.chainId, network: n.key }, Number(n.relayer.balance)]),
    );
    gauge(
      "paysession_network_head_block",
      "Head block seen by the last readiness probe.",
      nets.filter((n) => n.headBlock !== null).map((n) => [{ chain_id: n.chainId, network: n.key }, Number(n.headBlock)]),
    );
    if (db) {
      const lag = nets.flatMap((n) => {
        const indexed = db.indexerHeads.find((h) => h.chainId === n.chainId);
        if (!indexed || n.headBlock === null) return [];
        const d = BigInt(n.headBlock) - indexed.block;
        return [[{ chain_id: n.chainId, network: n.key }, Number(d < 0n ? 0n : d)] as [Record<string, string | number>, number]];
      });
      gauge("paysession_indexer_lag_blocks", "RPC head (last readiness probe) minus the indexer's head.", lag);
    }
    return out.join("\n") + "\n";
  }
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Takes only what it reads (not the whole services bag, which holds the registry: no import circle). */
export function metricsRoutes(services: { config: Pick<Config, "metricsToken">; metrics?: MetricsRegistry }) {
  return new Elysia().get(
    "/metrics",
    async ({ request }) => {
      const token = services.config.metricsToken?.reveal();
      if (token) {
        const header = request.headers.get("authorization") ?? "";
        const m = /^Bearer (.+)$/.exec(header);
        if (!m) throw new ApiError("credentials_missing", "GET /metrics takes Authorization: Bearer <SERVICE_METRICS_TOKEN>.");
        if (!timingSafeEqual(digest(m[1]!), digest(token))) throw new ApiError("metrics_token_invalid");
      }
      const body = services.metrics ? await services.metrics.render() : "";
      return new Response(body, { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
    },
    { detail: { hide: true } },
  );
}
