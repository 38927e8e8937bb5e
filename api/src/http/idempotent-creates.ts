/**
 * Creates sent with an Idempotency-Key, with group commit (db/group.ts): the keyed creates that
 * arrive while a batch is out share the next transaction — one claim statement for all their
 * keys, one insert for all their sessions (insertSessions), one statement storing all their
 * sealed answers — instead of a transaction of five round trips each. The typed server client
 * (sdk/server) sends a key with every create, so this is the path most merchants take.
 *
 * The promise of withIdempotency (idempotency.ts) is unchanged, because only claimed keys are
 * done here: a key the group cannot claim is another request's (answered and stored, or still
 * being written), and its request goes through withIdempotency alone, which replays the stored
 * answer, waits for the one being written, or refuses a different body. So does every create of
 * a batch refused for its content (the transaction rolled back: nothing of it was claimed).
 *
 * Creates carry their key lookup's check (sessions/repository.ts insertSessions), which fails
 * only when the key or the settlement addresses changed since that lookup. A batch in which a
 * create failed it is rolled back whole — no claim is left without an answer —
 * and its creates come back to be sent again: the stale ones after a fresh lookup
 * (http/payment-sessions.ts createKeyed).
 */
import type { Sql } from "postgres";
import { Group, refusedForContent, type Member } from "../db/group.ts";
import { insertSessions, type CreatedSession, type NewSession } from "../sessions/repository.ts";
import { claimKeys, storeResponses, type KeyClaim, type StoredResponse } from "./idempotency.ts";

export interface KeyedCreate {
  claim: KeyClaim;
  session: NewSession;
  /** The answer to store and send, from the session as written. */
  respond: (created: CreatedSession) => StoredResponse;
}

/**
 * Not claimed, and nothing of it written: `alone`, its key is another request's (or its batch was
 * refused for its content): do it with withIdempotency, alone; `stale`, its key check failed
 * (sessions/repository.ts insertSessions): look the key up again and prepare it anew; `again`,
 * another create's check failed and the batch's transaction was rolled back: send it again.
 */
export type KeyedOutcome = { claimed: true; response: StoredResponse } | { claimed: false; why: "alone" | "stale" | "again" };

/** Thrown inside a batch's transaction to roll it back when creates of it failed their key check. */
class StaleChecks extends Error {
  constructor(readonly items: ReadonlySet<KeyedCreate>) {
    super("key checks failed");
  }
}

export const KEYED_CREATE_GROUP_LIMITS = { maxBatch: 64, maxInFlight: 1 };

export function keyedCreateGroup(sql: Sql, limits = KEYED_CREATE_GROUP_LIMITS): Group<KeyedCreate, KeyedOutcome> {
  const send = async (batch: Member<KeyedCreate, KeyedOutcome>[]) => {
    let outcomes: KeyedOutcome[];
    try {
      outcomes = (await sql.begin(async (tx) => {
        const claimed = await claimKeys(
          tx,
          batch.map((m) => m.item.claim),
        );
        const mine = batch.flatMap((m, i) => (claimed[i] ? [m.item] : []));
        const created = await insertSessions(
          tx,
          mine.map((c) => c.session),
        );
        // A create whose key check failed was not written, but its key is claimed: the whole batch
        // rolls back (claims and sessions), rather than leave a claim with no answer behind.
        const stale = new Set(mine.filter((_, i) => created[i] === null));
        if (stale.size > 0) throw new StaleChecks(stale);
        const responses = new Map(mine.map((c, i) => [c, c.respond(created[i]!)]));
        await storeResponses(
          tx,
          mine.map((c) => ({ claim: c.claim, response: responses.get(c)! })),
        );
        return batch.map((m): KeyedOutcome => (responses.has(m.item) ? { claimed: true, response: responses.get(m.item)! } : { claimed: false, why: "alone" }));
      })) as KeyedOutcome[];
    } catch (e) {
      if (e instanceof StaleChecks) outcomes = batch.map((m) => ({ claimed: false, why: e.items.has(m.item) ? "stale" : "again" }));
      else if (batch.length === 1 || !refusedForContent(e)) throw e;
      else outcomes = batch.map(() => ({ claimed: false, why: "alone" }));
    }
    batch.forEach((m, i) => m.resolve(outcomes[i]!));
  };
  return new Group(send, { ...limits, writes: true });
}
