import net from "node:net";
import { CUSTOM_PLANS, KEPT_PLANS } from "../../../shared/postgres-settings.ts";
import postgres, { type Sql, type TransactionSql } from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema.ts";
import { DeadlineExceeded, requestScope } from "./deadline.ts";

export type Db = PostgresJsDatabase<typeof schema> & { $client: Sql };

export interface Database {
  sql: Sql;
  db: Db;
  close(): Promise<void>;
}

export interface PoolOptions {
  /** Connections in the pool; default 20. */
  max?: number;
  /** A connection attempt (TCP + startup) gives up after this; default 2000 ms. */
  connectTimeoutMs?: number;
  /**
   * Postgres's statement_timeout and idle_in_transaction_session_timeout for every
   * connection; default 5000 ms. 0: none (the migration runner lifts it for itself).
   */
  statementTimeoutMs?: number;
  /**
   * "custom" (default): every statement planned for its parameters and the tables as they are
   * now (shared/postgres-settings.ts, CUSTOM_PLANS). "kept": each statement planned once per
   * connection, never with a sequential scan (KEPT_PLANS) — only for statements written to have
   * one right plan at any table size: the grouped creates, keyed creates and key lookups.
   */
  plans?: "custom" | "kept";
  /**
   * The connections hold session state that must live as long as the pool (a session advisory
   * lock: nodes/indexer-seat.ts): never recycled. By default postgres.js replaces each
   * connection after 30 to 60 minutes.
   */
  keepConnections?: boolean;
  /**
   * Called when one of the pool's connections closes (whatever the cause). For a pool whose
   * connection holds a session lock, that is the moment the lock is gone: postgres.js would
   * otherwise reconnect without a word at the next statement.
   */
  onConnectionClosed?: () => void;
}

/**
 * postgres.js 3.4.9 under Bun: when a connection is closed *with an error* (the server was
 * killed: ECONNRESET), the queries already written to it are neither answered nor rejected
 * (`closed(hadError)` skips them), so they hang until the server returns and may then run
 * late — long after their request was answered. Reporting every close as a clean one makes
 * postgres.js reject them at once (CONNECTION_CLOSED); errors are still reported through the
 * socket's 'error' event. A refused connection then fails in about a millisecond.
 */
class PoolSocket extends net.Socket {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    return event === "close" ? super.emit("close", false) : super.emit(event, ...args);
  }
}

/**
 * One postgres.js pool, shared by drizzle and by the few raw statements on hot paths.
 * Beware: drizzle takes over postgres.js's parsing and serializing of dates and json on
 * the client it wraps, so raw statements pass only strings and numbers (json as
 * `${JSON.stringify(x)}::jsonb`, times from now() in SQL) and read dates back as text
 * (db/rows.ts decodes them).
 *
 * Bounded everywhere: connect timeout, statement timeout, and — for transactions started on
 * behalf of a request — the request deadline's fence before COMMIT (deadline.ts).
 */
export function connect(url: string, opts: PoolOptions = {}): Database {
  const statementTimeoutMs = opts.statementTimeoutMs ?? 5000;
  let next = 0;
  const sql = postgres(url, {
    max: opts.max ?? 20,
    onnotice: () => {},
    // bigint columns come back as JS bigint, never a lossy number.
    types: { bigint: postgres.BigInt },
    connect_timeout: (opts.connectTimeoutMs ?? 2000) / 1000,
    keep_alive: 10,
    ...(opts.keepConnections ? { max_lifetime: 0 } : {}),
    connection: {
      ...(opts.plans === "kept" ? KEPT_PLANS : CUSTOM_PLANS),
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, idle_in_transaction_session_timeout: Math.max(statementTimeoutMs, 10_000) } : {}),
    },
    socket: (o: { host: string[]; port: number[]; path?: string }) => {
      const s = new PoolSocket();
      if (opts.onConnectionClosed) s.once("close", opts.onConnectionClosed);
      if (o.path) s.connect(o.path);
      else {
        const i = next++ % o.host.length;
        s.connect(o.port[i] ?? o.port[0]!, o.host[i]!);
      }
      return s;
    },
  } as postgres.Options<{}>);
  fenceTransactions(sql);
  const db = drizzle(sql, { schema });
  return { sql, db, close: () => sql.end({ timeout: 5 }) };
}

/**
 * Every `sql.begin` started inside a request scope commits only while the request's deadline
 * has not passed (deadline.ts). The check runs after the transaction's last statement, in the
 * same microtask run as postgres.js sending COMMIT, so the deadline timer cannot slip between.
 */
function fenceTransactions(sql: Sql): void {
  const begin = sql.begin.bind(sql) as (...args: unknown[]) => Promise<unknown>;
  (sql as { begin: unknown }).begin = (...args: unknown[]) => {
    const fnIndex = typeof args[0] === "function" ? 0 : 1;
    const fn = args[fnIndex] as (tx: unknown) => unknown;
    const scope = requestScope.getStore();
    if (!scope) return begin(...args);
    if (scope.expired) return Promise.reject(new DeadlineExceeded());
    let entered = false;
    const wrapped = async (tx: unknown) => {
      const x = fn(tx);
      const result = await (Array.isArray(x) ? Promise.all(x) : x);
      if (scope.expired) throw new DeadlineExceeded();
      scope.committing++;
      entered = true;
      return result;
    };
    const copy = [...args];
    copy[fnIndex] = wrapped;
    return begin(...copy).finally(() => {
      if (!entered) return;
      scope.committing--;
      if (scope.committing === 0) scope.settled?.();
    });
  };
}

/**
 * An array parameter for raw statements on the shared client (drizzle's serializers on that
 * client do not handle arrays): sent as Postgres's array text and cast in SQL, so the statement
 * text is the same whatever the count (prepared once). `${arrayParam(q, ids)}` is a `text[]`.
 */
export function arrayParam(q: Sql | TransactionSql, values: readonly (string | number | null)[], type: "text" | "bigint" | "int" | "jsonb" | "numeric" = "text") {
  return q`(${pgArray(values)}::text)::${q.unsafe(type)}[]`;
}

function pgArray(values: readonly (string | number | null)[]): string {
  const item = (v: string | number | null) => (v === null ? "NULL" : `"${String(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`);
  return `{${values.map(item).join(",")}}`;
}
