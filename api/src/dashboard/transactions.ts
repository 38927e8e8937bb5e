/**
 * The Transactions view's query: a merchant's sessions of one environment, newest first,
 * filtered by status and creation date, searched by session id, reference (a prefix), deposit address or
 * transaction hash, paged by keyset (created_at, id) so page 5,000 costs what page 1 does
 * (the indexes payment_sessions_list_idx / _status_idx; bench/dashboard.ts).
 */
import type { Sql } from "postgres";
import type { Environment } from "../../../shared/environment.ts";
import { isSessionStatus, type SessionStatus } from "../../../shared/status.ts";
import { isId } from "../../../shared/ids.ts";
import { sessionFromSql } from "../sessions/repository.ts";
import type { SessionRow } from "../sessions/views.ts";

export const PAGE_SIZE = 25;

export interface Filters {
  status?: SessionStatus;
  /** YYYY-MM-DD, UTC, inclusive. */
  from?: string;
  to?: string;
  q?: string;
}

export type Search =
  | { kind: "session"; id: string }
  | { kind: "address"; address: string }
  | { kind: "tx"; hash: string }
  | { kind: "reference"; reference: string };

/** What a search box entry is: a session id, a deposit address, a transaction hash, or else a reference. */
export function classifySearch(raw: string): Search | undefined {
  const q = raw.trim();
  if (!q) return undefined;
  if (isId("paymentSession", q)) return { kind: "session", id: q };
  if (/^0x[0-9a-fA-F]{40}$/.test(q)) return { kind: "address", address: q.toLowerCase() };
  if (/^0x[0-9a-fA-F]{64}$/.test(q)) return { kind: "tx", hash: q.toLowerCase() };
  return { kind: "reference", reference: q.slice(0, 255) };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const validDay = (s: string) => DAY.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));

/** Filters from a query string; unknown or malformed values are dropped (and reported for the page). */
export function parseFilters(query: Record<string, string | undefined>): { filters: Filters; problems: string[] } {
  const filters: Filters = {};
  const problems: string[] = [];
  if (query.status) {
    if (isSessionStatus(query.status)) filters.status = query.status;
    else problems.push("Unknown status; showing every status.");
  }
  for (const k of ["from", "to"] as const) {
    const v = query[k];
    if (!v) continue;
    if (validDay(v)) filters[k] = v;
    else problems.push(`The ${k === "from" ? "start" : "end"} date must be a date (YYYY-MM-DD).`);
  }
  if (query.q?.trim()) filters.q = query.q.trim().slice(0, 255);
  return { filters, problems };
}

export interface Page {
  rows: SessionRow[];
  /** The last row's id when a later (older) page exists. */
  next?: string;
  /** The first row's id when an earlier (newer) page exists. */
  previous?: string;
}

/**
 * One page. `after`: rows older than that session; `before`: rows newer than it (read
 * oldest-first and turned around). Both by keyset, compared inside SQL to keep microseconds.
 */
export async function listTransactions(
  sql: Sql,
  owner: { merchantId: string; environment: Environment },
  filters: Filters,
  cursor: { after?: string; before?: string } = {},
  limit = PAGE_SIZE,
): Promise<Page> {
  const where = [sql`s.merchant_id = ${owner.merchantId}`, sql`s.environment = ${owner.environment}`];
  if (filters.status) where.push(sql`s.status = ${filters.status}`);
  if (filters.from) where.push(sql`s.created_at >= ${filters.from}::date::timestamptz`);
  if (filters.to) where.push(sql`s.created_at < (${filters.to}::date + 1)::timestamptz`);
  const search = filters.q ? classifySearch(filters.q) : undefined;
  if (search?.kind === "session") where.push(sql`s.id = ${search.id}`);
  // By prefix ("order-10" finds order-10, order-104, …), on payment_sessions_reference_idx (text_pattern_ops).
  if (search?.kind === "reference") where.push(sql`s.reference_id like ${likePrefix(search.reference)}`);
  if (search?.kind === "address") where.push(sql`s.id in (select session_id from app.session_deposits where address = ${search.address})`);
  if (search?.kind === "tx") where.push(sql`s.id in (select session_id from app.session_funds where tx_hash = ${search.hash})`);
  const backwards = !!cursor.before && !cursor.after;
  const id = cursor.after ?? cursor.before;
  if (id && isId("paymentSession", id)) {
    const t = sql`(select created_at from app.payment_sessions where id = ${id})`;
    where.push(backwards ? sql`(s.created_at, s.id) > (${t}, ${id})` : sql`(s.created_at, s.id) < (${t}, ${id})`);
  }
  const clause = where.reduce((acc, w, i) => (i === 0 ? sql`${w}` : sql`${acc} and ${w}`));
  const order = backwards ? sql`order by s.created_at asc, s.id asc` : sql`order by s.created_at desc, s.id desc`;
  const found = await sql`select s.* from app.payment_sessions s where ${clause} ${order} limit ${limit + 1}`;
  const more = found.length > limit;
  let rows = found.slice(0, limit).map((r) => sessionFromSql(r));
  if (backwards) rows = rows.reverse();
  const page: Page = { rows };
  if (rows.length) {
    // Going forward there are newer rows when we came from a cursor; going back, older ones exist.
    if (backwards ? true : more) page.next = rows[rows.length - 1]!.id;
    if (backwards ? more : !!id) page.previous = rows[0]!.id;
  }
  return page;
}

/** A LIKE pattern matching what starts with `s`: its own % _ and \ match only themselves. */
export function likePrefix(s: string): string {
  return `${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A CSV field, quoted whenever it holds anything, that no spreadsheet runs as a formula however it
 * reads the file. A reader set to another separator (`;` in much of continental Europe, a tab)
 * honours a quote only where its own cell starts, so it splits inside our quotes; one that cuts
 * lines at every line break does so inside them too. So a cell may begin at the field's start and
 * after any `;`, tab or line break in it — and after a `,` too in a field that holds a line break,
 * since a reader that cut the line there no longer knows it is inside quotes. Wherever one of
 * = + - @ (after spaces, or a tab or CR) would begin a cell, a `'` goes before it, the mark
 * spreadsheets read as "text". (Metadata is JSON on one line: its commas stay as they are.)
 */
export function csvField(v: string | null | undefined): string {
  const s = v ?? "";
  if (s === "") return "";
  const startsCell = /[\r\n]/.test(s) ? ",;\t\r\n" : ";\t\r\n";
  let out = "";
  for (let i = 0; i <= s.length; i++) {
    if (i === 0 || startsCell.includes(s[i - 1]!)) {
      FORMULA_AHEAD.lastIndex = i;
      if (FORMULA_AHEAD.test(s)) out += "'";
    }
    if (i < s.length) out += s[i] === '"' ? '""' : s[i];
  }
  return `"${out}"`;
}

/** What a spreadsheet runs when a cell starts with it (its own spaces trimmed; a tab or CR counts). */
const FORMULA_AHEAD = /[ ]*[=+\-@\t\r]/y;
