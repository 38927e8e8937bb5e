/**
 * The dashboard home's reads: a merchant's sessions of one environment created in the period,
 * grouped per UTC day by status and paying network and token, and the payments that need
 * attention. home-figures.ts makes the page's figures of the groups.
 *
 * Counting a day means reading every session of it (10,000 a day at 1M sessions in 100 days:
 * 90 days take seconds), so a past day's groups are kept in app.dashboard_days once counted
 * and only today is counted on every view. A kept day stays right because a change to a session
 * always writes a session event (with the merchant, environment and time): each view first looks
 * at the events since its last look (app.dashboard_day_checks), and deletes the kept days whose
 * sessions they changed, to be counted again. bench/dashboard.ts measures it.
 */
import type { Sql, TransactionSql } from "postgres";
import { Type } from "@sinclair/typebox";
import type { Environment } from "../../../shared/environment.ts";
import type { DayGroup } from "../db/schema.ts";
import { arrayParam } from "../db/client.ts";
import { col, decodeFirst, decodeRows, rowShape } from "../db/rows.ts";
import { sessionFromSql } from "../sessions/repository.ts";
import type { SessionRow } from "../sessions/views.ts";
import { runsOf } from "./home-figures.ts";

/**
 * An event's time is its transaction's start; it becomes visible at commit. A look at the
 * events from a time less this margin sees every change committed since, as long as no
 * transaction lasts longer: the service's statements time out after 5 s and an idle
 * transaction after 10 s, far inside 5 minutes.
 */
const MARGIN = "5 minutes";

/** A FUNDED session is swept within minutes (the sweeper's retries give up after ≈ 8 min at the defaults): an hour is something wrong. */
export const FUNDED_TOO_LONG_MINUTES = 60;
/** Rows shown in each list of the attention section (the rest: through Transactions). */
export const ATTENTION_ROWS = 20;

type Owner = { merchantId: string; environment: Environment };

export interface Attention {
  errors: SessionRow[];
  /** FUNDED for longer than FUNDED_TOO_LONG_MINUTES, longest first, with when it became FUNDED. */
  stuck: { session: SessionRow; fundedAt: Date }[];
  stuckCount: number;
}

const Today = rowShape("today's UTC day", { day: col.text });

/** Today's UTC day, by the database's clock (the one that stamps created_at). */
export async function today(sql: Sql): Promise<string> {
  return decodeFirst(Today, await sql`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as day`)!.day;
}

/** A day's groups as counted (per_day below) or kept (app.dashboard_days.groups): DayGroup. */
const DayGroups = Type.Array(
  Type.Object({
    status: Type.String(),
    chainId: Type.Union([Type.Number(), Type.Null()]),
    token: Type.Union([Type.String(), Type.Null()]),
    decimals: Type.Union([Type.Number(), Type.Null()]),
    sessions: Type.Number(),
    amount: Type.String(),
  }),
);
const DayRow = rowShape("dashboard day groups", { day: col.text, groups: col.json(DayGroups) });

/**
 * The groups of the days `first` to `last` (YYYY-MM-DD, inclusive), counted from the sessions in
 * one statement; with `keep`, kept in app.dashboard_days by the same statement, so computed_at is
 * the snapshot they were counted in (two views counting the same day at once: the later stays).
 * One range, not a statement per day: the planner then reads a long range whole and joins the
 * deposits by hash (per day and with a probe of the deposit per session, a first 90-day view at
 * 1M sessions outlasted the 5 s deadline), and a short one (today) through
 * payment_sessions_list_idx and the deposits' primary key.
 */
async function countRange(sql: Sql | TransactionSql, owner: Owner, first: string, last: string, keep: boolean): Promise<{ day: string; groups: DayGroup[] }[]> {
  const { merchantId: m, environment: e } = owner;
  // Today (one day, keep = false) reaches each paid session's deposit by one index probe
  // (lateral, offset 0: the planner may not turn it into a join that reads every deposit; a
  // parallel plan's workers cost more to start than the probes take); past ranges join by hash.
  const deposits = keep
    ? sql`left join app.session_deposits dep on dep.session_id = s.id and dep.chain_id = s.funding_chain_id`
    : sql`left join lateral (select d.token_address, d.decimals from app.session_deposits d
                               where d.session_id = s.id and d.chain_id = s.funding_chain_id offset 0) dep on true`;
  const counted = sql`
    counted as (
      select (s.created_at at time zone 'UTC')::date as day, s.status, s.funding_chain_id as chain_id, dep.token_address as token, dep.decimals,
             count(*)::int as sessions, coalesce(sum(s.funding_amount), 0)::text as amount
        from app.payment_sessions s
        ${deposits}
       where s.merchant_id = ${m} and s.environment = ${e}
         and s.created_at >= (${first}::date::timestamp at time zone 'UTC') and s.created_at < ((${last}::date + 1)::timestamp at time zone 'UTC')
       group by 1, 2, 3, 4, 5),
    per_day as (
      select d.day::date as day,
             coalesce(jsonb_agg(jsonb_build_object('status', c.status, 'chainId', c.chain_id, 'token', c.token, 'decimals', c.decimals,
                                                   'sessions', c.sessions, 'amount', c.amount) order by c.status, c.chain_id, c.token)
                        filter (where c.status is not null), '[]'::jsonb) as groups
        from generate_series(${first}::date, ${last}::date, interval '1 day') as d(day)
        left join counted c on c.day = d.day::date
       group by 1)`;
  const rows = keep
    ? await sql`
        with ${counted},
        kept as (
          insert into app.dashboard_days (merchant_id, environment, day, groups, computed_at)
          select ${m}, ${e}, day, groups, statement_timestamp() from per_day
          on conflict (merchant_id, environment, day) do update set groups = excluded.groups, computed_at = excluded.computed_at
           where app.dashboard_days.computed_at < excluded.computed_at)
        select day::text as day, groups from per_day`
    : await sql`with ${counted} select day::text as day, groups from per_day`;
  return decodeRows(DayRow, rows);
}

/**
 * Forgets the kept days whose sessions changed since the last look, and records this look.
 * One statement, so the look's time and what it saw are the same snapshot. Without a record of
 * a last look (never looked, or the row deleted), nothing kept is trusted.
 */
async function forgetChangedDays(sql: Sql, owner: Owner): Promise<void> {
  const { merchantId: m, environment: e } = owner;
  await sql`
    with mark as (select checked_at from app.dashboard_day_checks where merchant_id = ${m} and environment = ${e}),
    touched as (
      select (s.created_at at time zone 'UTC')::date as day, max(ev.created_at) as last_event
        from mark, app.session_events ev join app.payment_sessions s on s.id = ev.session_id
       where ev.merchant_id = ${m} and ev.environment = ${e} and ev.created_at >= mark.checked_at - ${MARGIN}::interval
       group by 1),
    changed as (
      delete from app.dashboard_days d using touched t
       where d.merchant_id = ${m} and d.environment = ${e} and d.day = t.day and t.last_event >= d.computed_at - ${MARGIN}::interval),
    untrusted as (
      delete from app.dashboard_days d
       where d.merchant_id = ${m} and d.environment = ${e} and not exists (select 1 from mark))
    insert into app.dashboard_day_checks (merchant_id, environment, checked_at) values (${m}, ${e}, statement_timestamp())
    on conflict (merchant_id, environment) do update set checked_at = greatest(app.dashboard_day_checks.checked_at, excluded.checked_at)`;
}

/** The groups of every day of the period: past days kept (or counted and kept), today counted. */
export async function loadDays(sql: Sql, owner: Owner, days: string[], todayDay: string): Promise<Map<string, DayGroup[]>> {
  const byDay = new Map<string, DayGroup[]>();
  const past = days.filter((d) => d < todayDay);
  if (past.length) {
    await forgetChangedDays(sql, owner);
    const kept = await sql`
      select day::text as day, groups from app.dashboard_days
       where merchant_id = ${owner.merchantId} and environment = ${owner.environment} and day = any(${arrayParam(sql, past)}::date[])`;
    for (const r of decodeRows(DayRow, kept)) byDay.set(r.day, r.groups);
    const missing = past.filter((d) => !byDay.has(d));
    // At most 30 days a statement: each is kept as soon as counted, so a first 90-day view of a
    // big account that outlasts the request's deadline leaves its counted days for the next one.
    for (const [first, last] of runsOf(missing, 30)) {
      for (const r of await countRange(sql, owner, first, last, true)) byDay.set(r.day, r.groups);
    }
  }
  if (days.includes(todayDay)) {
    // Today is a short range read through indexes: a parallel plan only adds its workers'
    // start-up (60–70 ms of an 85 ms count at 10,000 sessions today, measured), so none.
    const [r] = await sql.begin(async (tx) => {
      await tx`set local max_parallel_workers_per_gather = 0`;
      return countRange(tx, owner, todayDay, todayDay, false);
    });
    byDay.set(todayDay, r!.groups);
  }
  return byDay;
}

/** The columns a stuck session's row has besides the session's own (sessionFromSql reads those). */
const StuckExtra = rowShape("stuck FUNDED session", { funded_at: col.time, total: col.bigint });

/** ERROR sessions created in the period (newest first), and FUNDED ones stuck for long whenever created. */
export async function loadAttention(sql: Sql, owner: Owner, firstDay: string): Promise<Attention> {
  const { merchantId: m, environment: e } = owner;
  const errors = await sql`
    select * from app.payment_sessions
     where merchant_id = ${m} and environment = ${e} and status = 'ERROR' and created_at >= (${firstDay}::date::timestamp at time zone 'UTC')
     order by created_at desc, id desc limit ${ATTENTION_ROWS}`;
  // When it became FUNDED: its latest event into FUNDED (a money event on a FUNDED session is FUNDED → FUNDED).
  const stuck = await sql`
    select s.*, f.funded_at::text as funded_at, count(*) over () as total
      from app.payment_sessions s
      cross join lateral (select max(ev.created_at) as funded_at from app.session_events ev
                           where ev.session_id = s.id and ev.status = 'FUNDED' and ev.previous_status is distinct from 'FUNDED') f
     where s.merchant_id = ${m} and s.environment = ${e} and s.status = 'FUNDED'
       and f.funded_at < now() - make_interval(mins => ${FUNDED_TOO_LONG_MINUTES})
     order by f.funded_at asc, s.id asc limit ${ATTENTION_ROWS}`;
  const extra = decodeRows(StuckExtra, stuck);
  return {
    errors: errors.map((r) => sessionFromSql(r)),
    stuck: stuck.map((r, i) => ({ session: sessionFromSql(r), fundedAt: extra[i]!.funded_at })),
    stuckCount: extra.length ? Number(extra[0]!.total) : 0,
  };
}
