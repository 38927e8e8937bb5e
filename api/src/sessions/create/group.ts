/**
 * Creates with group commit (db/group.ts): the creates that arrive while a batch is being written
 * leave together as one statement and one commit (statement.ts) — plain creates and creates sent
 * with an Idempotency-Key alike. Each create is still answered only after its own rows committed,
 * with its own token; nothing else changes for the merchant.
 *
 * One create cannot fail another: a batch refused for its content (a constraint, which a fresh
 * id and token make all but impossible, or a value validation should have refused) is written
 * again one create at a time, so only the create at fault fails. A batch that fails because the
 * database is away fails all its members, as a lone create would — not retried, since the commit
 * may have happened.
 */
import type { Sql } from "postgres";
import { Group, refusedForContent, type Member } from "../../db/group.ts";
import { insertSessions, type CreateOutcome, type NewSession } from "./statement.ts";

/**
 * One batch out at a time: the creates that arrive meanwhile all share the next statement (≈ 19
 * per statement at 50 connections against ≈ 9.5 with two out, and somewhat more creates per
 * second on the 2-core bench machine). A batch is a few milliseconds; a stuck one is bounded by
 * the statement timeout like any other statement.
 */
export const CREATE_GROUP_LIMITS = { maxBatch: 64, maxInFlight: 1 };

export type CreateGroup = Group<NewSession, CreateOutcome>;

export function createGroup(sql: Sql, limits: { maxBatch: number; maxInFlight: number } = CREATE_GROUP_LIMITS): CreateGroup {
  const send = async (batch: Member<NewSession, CreateOutcome>[]) => {
    try {
      const outcomes = await insertSessions(
        sql,
        batch.map((m) => m.item),
      );
      batch.forEach((m, i) => m.resolve(outcomes[i]!));
    } catch (e) {
      if (batch.length === 1 || !refusedForContent(e)) throw e;
      await Promise.all(batch.map((m) => insertSessions(sql, [m.item]).then(([c]) => m.resolve(c!), m.reject)));
    }
  };
  return new Group(send, { ...limits, writes: true });
}
