/** Merchant-side payment-session endpoints (API key). */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { isSessionStatus } from "../../../shared/status.ts";
import { isId, newId } from "../../../shared/ids.ts";
import { publicMerchantId } from "../credentials/store.ts";
import { checkCreateInput, type CreateSessionBody as CreateBody } from "../sessions/create-input.ts";
import { depositsOf, findSession, insertSession, listSessions, loadMerchantView, readMerchantView, type CreatedSession as CreatedSessionRow, type NewSession } from "../sessions/repository.ts";
import { cancelSession } from "../sessions/cancel.ts";
import { merchantView, type SessionRow } from "../sessions/views.ts";
import { planDeposits } from "../sessions/deposits.ts";
import { readJsonBody } from "./body.ts";
import { readIdempotencyKey, requestHash, withIdempotency, type StoredResponse } from "./idempotency.ts";
import { requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { CreatedSession, CreateSessionBody, ListQuery, MerchantSession, SessionList } from "./payment-sessions.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Payment sessions (server, API key)";

/** A create's key check failed three times running (createPlain, createKeyed): nothing was created. */
const CHANGED_MEANWHILE = "The API key or the account's settlement addresses changed while the session was being created; nothing was created. Retry.";

export function paymentSessionRoutes(services: Services) {
  const { config, database } = services;
  const limits = {
    minAmountMinor: config.minAmountMinor,
    maxAmountMinor: config.maxAmountMinor,
    defaultExpirySeconds: config.sessionDefaultExpirySeconds,
    minExpirySeconds: config.sessionMinExpirySeconds,
    maxExpirySeconds: config.sessionMaxExpirySeconds,
  };

  /** The session to write (checked and planned) and how to answer once it is written. */
  async function prepare(auth: ApiKeyAuth, body: CreateBody): Promise<{ session: NewSession; respond: (c: CreatedSessionRow) => StoredResponse }> {
    const input = checkCreateInput(body, limits);
    const id = newId("paymentSession");
    const planOn = (networks: typeof services.networks) =>
      planDeposits({
        sessionId: id,
        environment: auth.environment,
        amountMinor: input.amountMinor,
        networks,
        settlements: auth.settlements,
        defaultSettlement: config.sandboxSettlementAddress,
      });
    const everywhere = planOn(services.networks);
    if (!everywhere.ok) {
      throw everywhere.problem === "no_network"
        ? new ApiError("network_unavailable", `No network is enabled for ${auth.environment} on this server.`)
        : new ApiError("settlement_address_missing");
    }
    // Only networks whose deposit factory is deployed: elsewhere a deposit address could not be swept.
    const { ready, notReady } = await services.readiness.partition(auth.environment);
    const plan = notReady.length === 0 ? everywhere : planOn(ready);
    if (!plan.ok) {
      const waiting = notReady.filter((n) => everywhere.deposits.some((d) => d.chainId === n.chainId));
      throw new ApiError(
        "network_unavailable",
        `No network of this session is ready for payments: ${waiting.map((n) => `${n.name} (chain ${n.chainId})`).join(", ")} ` +
          `${waiting.length === 1 ? "is" : "are"} not ready on this server (the operator has not deployed the deposit factory there yet). Retry later.`,
      );
    }
    return {
      session: {
        id,
        merchantId: auth.merchant.id,
        environment: auth.environment,
        input,
        tokenGraceSeconds: config.sessionTokenGraceSeconds,
        deposits: plan.deposits,
      },
      respond: ({ row, token }) => ({
        status: 201,
        body: {
          ...merchantView(row, publicMerchantId(auth.merchant, auth.environment), plan.deposits),
          paymentSessionToken: token,
          tokenExpiresAt: row.tokenExpiresAt.toISOString(),
        },
      }),
    };
  }

  /**
   * A plain create, through the group commit. Its statement writes it only if its key and the
   * merchant's settlement addresses are still those `auth` read (insertSessions; `auth` may be
   * this process's last lookup of the key: credentials/key-memo.ts). If they are not, nothing was
   * written: the key is looked up again — a revoked key is refused there — and the create is
   * prepared anew from what was read (deposit addresses for the new settlement addresses).
   */
  async function createPlain(request: Request, auth: ApiKeyAuth, body: CreateBody, prepared: Awaited<ReturnType<typeof prepare>>): Promise<StoredResponse> {
    for (let attempt = 1; ; attempt++) {
      const created = await services.creates.submit({ ...prepared.session, keyCheck: auth.check });
      if (created) return prepared.respond(created);
      // Only a key or settlement change between a lookup and its insert, three times running, gets here.
      if (attempt === 3) throw new ApiError("service_unavailable", CHANGED_MEANWHILE);
      auth = await requireApiKey(services, request, { again: true });
      prepared = await prepare(auth, body);
    }
  }

  /**
   * A create with an Idempotency-Key, through its own group (http/idempotent-creates.ts) while its
   * key is free, its lookup checked as a plain create's is (createPlain). Keyed creates never reuse
   * an earlier lookup (the route asks for a fresh one), so the check fails only on a change between
   * lookup and insert: a create whose check failed is looked up and prepared anew ("stale"); one
   * whose batch was rolled back for another create's failed check is sent again as it is
   * ("again"); nothing of either was claimed or written. A key the group cannot claim is another
   * request's: the create goes through withIdempotency alone (replay, wait for the first, or
   * refuse), whose insert has no check — fine, as its lookup is fresh.
   */
  async function createKeyed(request: Request, auth: ApiKeyAuth, body: CreateBody, key: string, hash: string, prepared: Awaited<ReturnType<typeof prepare>>) {
    for (let attempt = 1; ; attempt++) {
      const claim = { ctx: idempotencyContext(auth), key, hash };
      const grouped = await services.keyedCreates.submit({ claim, ...prepared, session: { ...prepared.session, keyCheck: auth.check } });
      if (grouped.claimed) return { ...grouped.response, replayed: false };
      if (grouped.why === "alone") {
        const { session, respond } = prepared;
        return withIdempotency(database.sql, claim.ctx, key, hash, async (tx) => respond(await insertSession(tx, session)));
      }
      if (attempt === 3) throw new ApiError("service_unavailable", CHANGED_MEANWHILE);
      if (grouped.why === "stale") {
        auth = await requireApiKey(services, request, { again: true });
        prepared = await prepare(auth, body);
      }
    }
  }

  function idempotencyContext(auth: ApiKeyAuth) {
    return { secret: services.encryptionKey, merchantId: auth.merchant.id, environment: auth.environment, endpoint: "POST /payment-sessions" };
  }

  /**
   * Plain creates go through the group commit (createPlain), creates with an Idempotency-Key
   * through theirs (createKeyed). A create that cannot be prepared (a bad amount, no ready network)
   * with a key still asks withIdempotency first, so that a retry of an answered create replays its
   * answer (a refusal is not stored: withIdempotency's transaction rolls back).
   */
  async function create(request: Request, auth: ApiKeyAuth, body: CreateBody, raw: unknown, key: string | undefined): Promise<StoredResponse & { replayed: boolean }> {
    let prepared: Awaited<ReturnType<typeof prepare>>;
    try {
      prepared = await prepare(auth, body);
    } catch (e) {
      if (key === undefined) throw e;
      return withIdempotency(database.sql, idempotencyContext(auth), key, requestHash(raw), async () => {
        throw e;
      });
    }
    if (key === undefined) return { ...(await createPlain(request, auth, body, prepared)), replayed: false };
    return createKeyed(request, auth, body, key, requestHash(raw), prepared);
  }

  /** The merchant's view with networks and history, as retrieve and cancel answer. */
  async function fullView(auth: ApiKeyAuth, row: SessionRow) {
    return loadMerchantView(database.db, row, publicMerchantId(auth.merchant, auth.environment));
  }

  async function loadOwn(auth: ApiKeyAuth, id: string) {
    const row = isId("paymentSession", id) ? await findSession(database.db, auth.merchant.id, auth.environment, id) : undefined;
    if (!row) throw notFound(id);
    return row;
  }

  function notFound(id: string) {
    return new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
  }

  return new Elysia()
    .post(
      "/payment-sessions",
      async ({ request, set }) => {
        // A plain create may reuse its key's last lookup: its insert checks the key (createPlain).
        // Creates with an Idempotency-Key look it up (measured: reusing it made them slower; docs/decisions.md, "A plain create checks its key itself").
        let auth = await requireApiKey(services, request, { reuse: !request.headers.has("idempotency-key") });
        let parsed: { key: string | undefined; raw: unknown; body: CreateBody } | undefined;
        let result: Awaited<ReturnType<typeof create>>;
        try {
          const key = readIdempotencyKey(request.headers);
          const raw = await readJsonBody(request);
          parsed = { key, raw, body: validateBody<CreateBody>(CreateSessionBody, raw) };
          result = await create(request, auth, parsed.body, parsed.raw, parsed.key);
        } catch (e) {
          // Refused before its insert could check the key: with a reused lookup the refusal may
          // come from what that lookup read (no settlement address then), and a key revoked since
          // must be answered 401 whatever else is wrong. So the answer comes from a fresh lookup.
          // (Not after a create's own retries gave up — service_unavailable, which nothing before
          // the insert throws: they looked the key up already.)
          if (!auth.reused || !(e instanceof ApiError) || e.code === "service_unavailable") throw e;
          auth = await requireApiKey(services, request, { again: true });
          if (!parsed) throw e; // the request itself is at fault, whatever its key
          result = await create(request, auth, parsed.body, parsed.raw, parsed.key);
        }
        set.status = result.status;
        if (result.replayed) set.headers["idempotent-replayed"] = "true";
        return result.body;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Create a payment session",
          description:
            "Returns the session with a fresh `paymentSessionToken` for `sdk.open`. Send `Idempotency-Key: <unique>` to make retries safe: for 24 h the same key and body replay the first response (header `Idempotent-Replayed: true`); the same key with another body is refused.",
          auth: "apiKey",
          body: CreateSessionBody,
          ok: { status: 201, schema: CreatedSession, description: "Created." },
          errors: [
            ...AUTH_ERRORS,
            ...BODY_ERRORS,
            "amount_invalid",
            "amount_too_small",
            "amount_too_large",
            "currency_unsupported",
            "idempotency_key_invalid",
            "idempotency_key_reused",
            "settlement_address_missing",
            "network_unavailable",
            "service_unavailable",
          ],
        }),
      },
    )
    .get(
      "/payment-sessions",
      async ({ request, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = query.limit === undefined ? 20 : Number(query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
          throw new ApiError("parameter_invalid", "limit must be a whole number from 1 to 100.", "limit");
        }
        if (query.status !== undefined && !isSessionStatus(query.status)) {
          throw new ApiError("parameter_invalid", "status must be one of PENDING, FUNDED, SUCCEEDED, CANCELED, ERROR.", "status");
        }
        let startingAfter;
        if (query.startingAfter !== undefined) {
          startingAfter = isId("paymentSession", query.startingAfter)
            ? await findSession(database.db, auth.merchant.id, auth.environment, query.startingAfter)
            : undefined;
          if (!startingAfter) throw new ApiError("parameter_invalid", "startingAfter is not a payment session of this account and environment.", "startingAfter");
        }
        const page = await listSessions(database.db, {
          merchantId: auth.merchant.id,
          environment: auth.environment,
          limit,
          status: query.status,
          startingAfter,
        });
        const mid = publicMerchantId(auth.merchant, auth.environment);
        const deposits = await depositsOf(database.db, page.rows.map((r) => r.id));
        return {
          data: page.rows.map((r) => merchantView(r, mid, deposits.get(r.id) ?? [])),
          hasMore: page.hasMore,
          nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.id : null,
        };
      },
      {
        query: ListQuery,
        detail: doc({
          tag: TAG,
          summary: "List payment sessions",
          description: "Newest first, in pages of `limit` (1–100, default 20). Pass the previous page's `nextCursor` as `startingAfter`.",
          auth: "apiKey",
          ok: { status: 200, schema: SessionList, description: "A page of sessions." },
          errors: [...AUTH_ERRORS, "parameter_invalid"],
        }),
      },
    )
    .get(
      "/payment-sessions/:id",
      async ({ request, params }) => {
        // One round trip (repository.ts readMerchantView): the key's last lookup is reused, and
        // the read's own statement checks that key still holds; if it does not, the key is looked
        // up again — a revoked key is refused there — and the session read with the fresh lookup.
        let auth = await requireApiKey(services, request, { reuse: true });
        if (!isId("paymentSession", params.id)) throw notFound(params.id);
        const read = (keyCheck: ApiKeyAuth["check"]) =>
          readMerchantView(database.sql, {
            id: params.id,
            merchantId: auth.merchant.id,
            environment: auth.environment,
            publicMerchantId: publicMerchantId(auth.merchant, auth.environment),
            keyCheck,
          });
        let found = await read(auth.reused ? auth.check : undefined);
        if (!found.keyOk) {
          auth = await requireApiKey(services, request, { again: true });
          found = await read(undefined);
        }
        if (!found.view) throw notFound(params.id);
        return found.view;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve a payment session",
          description: "The session with its `history`: every status change with its time and reason.",
          auth: "apiKey",
          ok: { status: 200, schema: MerchantSession, description: "The session." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/payment-sessions/:id/cancel",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        await cancelSession(database, { merchantId: auth.merchant.id, environment: auth.environment }, params.id);
        return fullView(auth, await loadOwn(auth, params.id));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Cancel a payment session",
          description: "Only while PENDING. The session becomes CANCELED with reason `canceled_by_merchant`; a webhook follows.",
          auth: "apiKey",
          body: EmptyBody,
          ok: { status: 200, schema: MerchantSession, description: "The canceled session." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "session_not_cancelable", "service_unavailable"],
        }),
      },
    );
}
