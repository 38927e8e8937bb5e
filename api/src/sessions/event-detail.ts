/**
 * What an event's `detail` holds, one shape per reason (docs/webhooks.md, "Event detail"): the
 * one definition. decide.ts and money-plan.ts build details typed by it, so a field that does not
 * belong to its reason is a compile error; the API's document describes them with these
 * schemas (one component, http/payment-sessions.schemas.ts), against which the conformance
 * tests check every answer; the server SDK's hand-written types are held to them at compile
 * time (sdk/server/types.test.ts).
 *
 * Amounts are decimal strings of the token's base units (never floats), chain ids and counts
 * JSON integers. Stored events are served as they were written, so these are the shapes every
 * build has written: a change may only add an optional field.
 */
import { t, type Static, type TSchema } from "elysia";
import type { TLiteral } from "@sinclair/typebox";
import { EVENT_REASONS, TRANSITION_REASONS, type EventReason, type MoneyEventReason, type TransitionReason } from "../../../shared/status.ts";

// JSON integers and literal unions, as http/schemas.ts spells them (that floor is above this one).
const Integer = (description: string) => t.Unsafe<number>({ type: "integer", description });
const BaseUnits = (description: string) => t.String({ pattern: "^[0-9]+$", description });
const fields = <P extends Parameters<typeof t.Object>[0]>(properties: P, description: string) => t.Object(properties, { additionalProperties: false, description });

const chainId = Integer("The network (chain id) it happened on.");
const txHashes = t.Array(t.String(), {
  description: "The transactions of the payments on that network: transfers into the deposit address, or the payer's signed authorization carried out.",
});
const txHash = t.String({ description: "The transaction." });
// Added later: optional, since stored events are served as they were written.
const method = t.Optional(
  t.Union([t.Literal("transfer"), t.Literal("authorization")], {
    description:
      "How it was paid: `transfer` (the payer sent the token to the deposit address), or `authorization` (the payer signed an EIP-3009 authorization, and its transaction moved the money straight to the settlement address: no sweep). Absent on events written before it was added.",
  }),
);
const payer = t.Optional(t.String({ description: "The address the money came from (EIP-55 checksum), when one address paid it all. Absent on events written before it was added." }));
const tokens = t.Optional(
  t.Array(
    t.Object(
      { token: t.String({ description: "The stablecoin's contract (EIP-55 checksum)." }), amount: BaseUnits("What it brought, in the session's unit on that network (the network's `decimals`).") },
      { additionalProperties: false },
    ),
    { description: "What each stablecoin brought on that network (any accepted one pays, at par; they add up). Absent on events written before it was added." },
  ),
);
const token = t.Optional(t.String({ description: "The stablecoin that moved (EIP-55 checksum). Absent on events written before it was added." }));
/** Money events only: the session's status reason at that moment (the status did not change). */
const statusReason = t.Union(TRANSITION_REASONS.map((r) => t.Literal(r)) as unknown as TLiteral<TransitionReason>[], {
  description: "The session's status reason when it happened (a money event leaves the status as it was).",
});

const none = (why: string) => fields({}, `No fields: ${why}`);
const payment = fields(
  {
    chainId,
    amount: BaseUnits("Confirmed on time on that network, in total."),
    overpaid: BaseUnits('What came on top of the session\'s amount: "0" for `paid`, the surplus for `overpaid`.'),
    txHashes,
    method,
    payer,
    tokens,
  },
  "The payment that funded the session.",
);

/** Each reason's detail (shared/status.ts has the reasons; `satisfies` keeps one entry per reason). */
export const EVENT_DETAILS = {
  created: none("the session was created."),
  paid: payment,
  overpaid: payment,
  expired: none("nothing was received before the expiry."),
  canceled_by_payer: none("nothing had been received."),
  canceled_by_merchant: none("nothing had been received."),
  underpaid: fields(
    {
      chainId,
      amount: BaseUnits("Confirmed on time on that network, in total."),
      shortBy: BaseUnits("What is missing to the session's amount."),
      txHashes,
      method,
      payer,
      tokens,
    },
    "The session expired with part of the amount paid (swept all the same).",
  ),
  simulated: none("a sandbox tool sent the session to ERROR."),
  swept: fields(
    {
      chainId,
      sweepTxHash: t.String({ description: "The last transaction that moved the funding amount to the settlement address: a sweep, or (method `authorization`) the payment itself." }),
      method: t.Optional(
        t.Union([t.Literal("transfer"), t.Literal("authorization")], {
          description: "`transfer`: swept from the deposit address; `authorization`: the payment by authorization moved it there in `sweepTxHash`, no sweep. Absent on events written before it was added.",
        }),
      ),
    },
    "The funding amount reached the settlement address.",
  ),
  sweep_failed: fields(
    { chainId, attempts: Integer("Attempts of the last sweep round."), error: t.String({ description: "Why its last attempt failed." }) },
    "Every sweep round of the funding network failed; the money waits at the deposit address.",
  ),
  reorged: fields({ chainId, amount: BaseUnits("What the network still shows at the deposit address, confirmed or not: less than the session's amount.") }, "The funding payment left the chain."),
  paid_after_cancel: fields(
    { chainId, amount: BaseUnits("Confirmed on that network, in total, whenever it came."), txHashes, method, payer, tokens },
    "Money arrived after the session was canceled or expired (swept all the same).",
  ),
  funds_received: fields(
    {
      chainId,
      txHash,
      logIndex: Integer("The transfer's log index in its transaction."),
      amountBaseUnits: BaseUnits("The transfer's amount."),
      blockTimestamp: t.String({ format: "date-time", description: "The time of its block." }),
      onTime: t.Boolean({ description: "Its block is no later than the session's expiry." }),
      method,
      payer,
      token,
      accepted: t.Optional(
        t.Boolean({
          description:
            "false: a token this session does not accept (sent by mistake): it does not count toward the payment, `amountBaseUnits` is in that token's own base units, and it is swept to the settlement address all the same. Absent: an accepted one.",
        }),
      ),
      statusReason,
    },
    "A confirmed transfer into a deposit address that no transition reported.",
  ),
  funds_settled: fields({ chainId, txHash, amountBaseUnits: BaseUnits("What the transaction moved to the settlement address."), statusReason }, "Money that reached the settlement address outside the SUCCEEDED transition."),
  funds_reverted: fields(
    {
      chainId,
      direction: t.Union([t.Literal("received"), t.Literal("settled")], { description: "`received`: money into the deposit address; `settled`: money to the settlement address." }),
      txHash,
      amountBaseUnits: BaseUnits("The amount of the movement."),
      statusReason,
    },
    "A movement reported before that the chain no longer has.",
  ),
} satisfies Record<EventReason, TSchema>;

/** The detail of an event of reason R. */
export type EventDetail<R extends EventReason = EventReason> = Static<(typeof EVENT_DETAILS)[R]>;

/** An event's reason with its detail: one variant per reason, so that checking `reason` narrows `detail`. */
export type ReasonAndDetail = { [R in EventReason]: { reason: R; detail: EventDetail<R> } }[EventReason];
/**
 * What decide.ts gives for a status change: the reason with its detail, where a detail without
 * fields must be empty (`{}`, the type a reader narrows to, would take any object).
 */
export type TransitionReasonAndDetail = { [R in TransitionReason]: { reason: R; detail: keyof EventDetail<R> extends never ? Record<string, never> : EventDetail<R> } }[TransitionReason];
/** What a money event's builder gives (money-plan.ts); the repository adds the status reason of the moment. */
export type MoneyReasonAndDetail = { [R in MoneyEventReason]: { reason: R; detail: Omit<EventDetail<R>, "statusReason"> } }[MoneyEventReason];

/**
 * The same as one schema: a component of the API's document (http/app.ts), one variant per
 * reason (`oneOf`, told apart by `reason`). Its static type is ReasonAndDetail, mapped from the
 * same EVENT_DETAILS.
 */
export const ReasonAndDetailSchema = t.Unsafe<ReasonAndDetail>({
  oneOf: EVENT_REASONS.map((reason) => t.Object({ reason: t.Literal(reason), detail: EVENT_DETAILS[reason] }, { title: reason })),
  discriminator: { propertyName: "reason" },
  description: "Why the event happened (`reason`) and what it says (`detail`, one shape per reason).",
});
