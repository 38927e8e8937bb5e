/**
 * A visit of a payment link's page that proceeds: a payment session started through the one
 * create path (sessions/create/create.ts createPaymentSession), as the merchant's own server
 * would with its key — the same input checks, deposit planning, statement and answer. Two things
 * differ, both in where the create is written: there is no API key (the merchant and its
 * settlement addresses are read as a key lookup reads them, and checked again in the write's
 * transaction), and the write is one transaction that first locks the link's row, then judges
 * the link (deactivated, expired, used up: rules.ts) with its uses counted after the lock, then
 * writes the session with its paymentLinkId. So N visits at once of a link with one use left
 * start one session; the others are refused with the link's state.
 *
 * A visit carries the page's own random token as an Idempotency-Key (scoped to the link): the
 * same form sent twice (a double click, a reload that re-posts) replays the first session
 * instead of spending a second use.
 */
import type { Sql } from "postgres";
import { formatAmount } from "../../../shared/money.ts";
import { ApiError } from "../errors.ts";
import { merchantForCreate, publicMerchantId, settlementsTextOf } from "../credentials/store.ts";
import { createPaymentSession, type CreateDeps, type CreatingKey } from "../sessions/create/create.ts";
import { insertSessions, type CreateOutcome, type NewSession } from "../sessions/create/statement.ts";
import { closedError, linkStatus } from "./rules.ts";
import { keyRecorded, lockForVisit, type LinkRow } from "./store.ts";

export interface StartedSession {
  paymentSessionId: string;
  paymentSessionToken: string;
  /** The merchant's public id in the link's environment (the checkout's merchantId). */
  merchantId: string;
  replayed: boolean;
}

/** Starts a session of `amountMinor` from `link`; throws the catalogue's refusal (link closed, amount out of the service's bounds, …). */
export async function startFromLink(
  deps: Omit<CreateDeps, "creates">,
  link: Pick<LinkRow, "id" | "merchantId" | "environment" | "currency" | "metadata">,
  amountMinor: bigint,
  /** The visit's Idempotency-Key (visitKey) and the hash of the body it starts (http/idempotency.ts requestHash of sessionBody). */
  idempotency: { key: string; hash: string } | undefined,
): Promise<StartedSession> {
  const { sql } = deps.database;
  const read = async (): Promise<CreatingKey> => {
    const m = await merchantForCreate(sql, link.merchantId, link.environment);
    if (!m) throw new ApiError("resource_not_found", "No such payment link.");
    // No key: the check the write holds the create to is the settlements text alone (written below).
    return { environment: link.environment, merchant: m.merchant, settlements: m.settlements, check: { keyHash: "", keyId: "", settlements: m.settlementsText } };
  };
  const key = await read();
  const body = sessionBody(link, amountMinor);
  const created = await createPaymentSession(
    { ...deps, creates: { submit: (s) => writeFromLink(sql, link, s) } },
    { key, reused: false, lookAgain: read },
    { body, ...(idempotency ? { idempotency } : {}) },
  );
  const answer = created.body as { paymentSessionId: string; paymentSessionToken: string };
  return {
    paymentSessionId: answer.paymentSessionId,
    paymentSessionToken: answer.paymentSessionToken,
    merchantId: publicMerchantId(key.merchant, link.environment),
    replayed: created.replayed,
  };
}

/** The create body a visit sends down the create path. */
export function sessionBody(link: Pick<LinkRow, "currency" | "metadata">, amountMinor: bigint) {
  return { amount: formatAmount(amountMinor), currency: link.currency, metadata: link.metadata };
}

const VISIT_SHAPE = /^[0-9A-Za-z_-]{16,64}$/;

/** The Idempotency-Key of a visit: the page's random token, scoped to the link; undefined for a token not of the page's shape. */
export function visitKey(linkId: string, visit: string | undefined): string | undefined {
  return visit !== undefined && VISIT_SHAPE.test(visit) ? `payment-link:${linkId}:${visit}` : undefined;
}

/** The write of a link's create: the link locked and judged, the settlements as read, then the create's own statement. */
async function writeFromLink(sql: Sql, link: Pick<LinkRow, "id" | "merchantId" | "environment">, s: NewSession): Promise<CreateOutcome> {
  return sql.begin(async (tx) => {
    const state = await lockForVisit(tx, link.id);
    if (!state) throw new ApiError("resource_not_found", "No such payment link.");
    // A repeated visit first: its session is the one it already started, whatever the uses now say.
    if (s.claim && (await keyRecorded(tx, link, s.claim.keyHash))) return { written: false, why: "idempotency_key_taken" } as const;
    const status = linkStatus(state, state.now);
    if (status !== "active") throw closedError(status);
    if ((await settlementsTextOf(tx, link.merchantId, link.environment)) !== (s.keyCheck?.settlements ?? null)) return { written: false, why: "key_changed" } as const;
    const [outcome] = await insertSessions(tx, [{ ...s, keyCheck: undefined, paymentLinkId: link.id }]);
    return outcome!;
  });
}
