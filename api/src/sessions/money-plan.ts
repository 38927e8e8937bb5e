/**
 * Which movements of money a step reports to the merchant, and how, as one pure function:
 *
 *   planMoneyReports(known, movements) → { reports, sweeps }
 *
 * `known` is what the session holds already (its ledger rows in app.session_funds, its status
 * after this step's transition, that transition's event, its deposits); `movements` is what the
 * chain and our receipts show now (confirmed money in and settled, stray tokens, every movement
 * still present). The actor (actor.ts) reads both, calls this, and writes what it says in the
 * step's transaction, in the plan's order (funds.ts) — as it does with decide.ts for the status.
 * Given the ledger the plan's rows leave, the next step plans nothing: a movement is reported
 * once, however many steps see it.
 *
 * Rules (money-plan.test.ts has a case for each):
 *   - Every confirmed movement of the session's own money — into a deposit address or paid by
 *     authorization (`in`, one ledger row per log), to the settlement address (`out`, one row
 *     per transaction) — is reported once the session has left PENDING; until then the
 *     transition to come (FUNDED, or the expiry's) reports it.
 *   - A movement the step's transition caused, on that transition's network, is told by its
 *     event: money in by FUNDED (paid, overpaid) or ERROR (underpaid, paid_after_cancel, …),
 *     money settled by SUCCEEDED. Any other gets an event of its own (`funds_received`,
 *     `funds_settled`).
 *   - Two wait, unwritten, for the transition that always follows them: money in while
 *     CANCELED (paid_after_cancel), money settled on the funding network while FUNDED
 *     (SUCCEEDED).
 *   - A reported movement the chain no longer has (nothing of its transaction present in its
 *     direction: a reorg deeper than the confirmations, a chain that went back) is said once —
 *     money in by this step's ERROR on its network (reorged), else `funds_reverted` — and its row
 *     marked; whatever replaces it is a movement of its own. A marked row is never reported again.
 *   - A token the session does not accept (stray), once at its network's depth: reported in any
 *     status (`funds_received`, `accepted: false`, in its own base units), never by a
 *     transition, and swept to the settlement address; it never counts toward the payment.
 *
 * Refunds (money going back out to a payer, to come) plug in as one more kind of movement
 * without rewriting this: a direction in DIRECTIONS (say `refund`; the ledger's row shape in
 * funds.ts reads it from there, a migration widens the table's direction check), its row type in
 * MovementOf, its Rule in RULES (which transitions tell it, what holds it back, its own event —
 * a new money reason in event-detail.ts — and its name in `funds_reverted`, a new value there
 * too), and its list in StepMovements, reported after the others with `report(RULES.refund, …)`.
 * The compiler asks for the rule once DIRECTIONS has the direction; reverts, the once-only
 * ledger key and the writer work on any direction as they are.
 *
 * Automatic returns (docs/refunds.md, "Automatic returns"): which ones a plan's new money opens
 * is `returnsOpened(plan, step)`, pure too; the actor queues their timers in the same step
 * (effects/auto-return-timer.ts), so money recorded and its return's timer commit together.
 */
import type { SessionStatus } from "../../../shared/status.ts";
import { checksumAddress } from "../../../shared/contracts/keccak.ts";
import type { EventDetail, MoneyReasonAndDetail } from "./event-detail.ts";
import type { Outflow, PaymentMethod, Transfer } from "./facts.ts";
import type { DepositFact } from "./movements.ts";

/** Where money moves, as the ledger's `direction` holds it: into the session (`in`), to the settlement address (`out`). */
export const DIRECTIONS = ["in", "out"] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** What every ledger row holds (app.session_funds), whatever its direction. */
interface LedgerRow {
  direction: Direction;
  chainId: number;
  txHash: string;
  logIndex: number;
  /** In the session's unit on the network, or a stray token's own base units. */
  amount: bigint;
  /** The stablecoin that moved; absent where unknown or several (one sweep may move several). */
  token?: string;
  blockTimestamp?: Date;
}

/** Money into a deposit address, or paid by authorization: one row per log. */
export interface ReceivedMovement extends LedgerRow {
  direction: "in";
  blockTimestamp: Date;
  method: PaymentMethod;
  payer?: string;
}

/** Money that reached the settlement address: one row per transaction. */
export interface SettledMovement extends LedgerRow {
  direction: "out";
  /** -1: the row stands for the whole transaction. */
  logIndex: -1;
}

/** Each kind of movement by its direction (one not named here is a plain LedgerRow). */
interface MovementOf extends Record<Direction, LedgerRow> {
  in: ReceivedMovement;
  out: SettledMovement;
}
export type LedgerMovement = MovementOf[Direction];

/** A ledger row a step before this one wrote (app.session_funds), reverted or not. */
export interface RecordedMovement {
  chainId: number;
  direction: Direction;
  /** As stored: lowercase. */
  txHash: string;
  logIndex: number;
  /** Decimal text, as stored. */
  amount: string;
  reverted: boolean;
}

/** What the session already holds. */
export interface KnownMoney {
  /** Its ledger so far, read under the step's row lock. */
  recorded: readonly RecordedMovement[];
  /** Its status after this step's transition. */
  status: SessionStatus;
  /** This step's transition on a network, if any: its event (queued already) tells the movements it caused. */
  transition?: { eventId: string; to: SessionStatus; chainId: number };
  expiresAt: Date;
  /** The network that paid, once FUNDED (this step's funding, or the session's). */
  fundingChainId?: number;
  /** Its deposit addresses: each network's depth, and where a stray token is swept from and to. */
  deposits: readonly DepositFact[];
}

/** What the chain (as indexed) and our receipts show at this step. */
export interface StepMovements {
  /** Confirmed money in, in accepted tokens (payments by authorization among them: `method`). */
  incoming: readonly Transfer[];
  /** Confirmed money at the settlement address, one entry per transaction (movements.settledTransactions). */
  outgoing: readonly Outflow[];
  /** Transfers into the deposit addresses in tokens the session does not accept, confirmed or not. */
  strays: readonly Transfer[];
  /** Every movement still there, confirmed or not, as `chainId:direction:txHash` (movements.presentMovements). */
  present: ReadonlySet<string>;
}

/** How a report reaches the merchant: in this step's transition's event, or in a money event of its own. */
export type ToldBy = { by: "transition"; eventId: string } | { by: "own event"; event: MoneyReasonAndDetail };

/** One ledger write, with the event that tells it (written first when it is its own). */
export type MoneyReport =
  | { kind: "record"; movement: LedgerMovement; toldBy: ToldBy }
  /** Marks a recorded row reverted (its event kept if it had one). */
  | { kind: "revert"; movement: RecordedMovement; toldBy: ToldBy };

/** A stray token's sweep to the settlement address (effects/sweep-queue.ts, with the session's id). */
export interface StraySweep {
  chainId: number;
  depositAddress: string;
  settlementAddress: string;
  tokenAddress: string;
  amount: bigint;
}

export interface MoneyPlan {
  /** In the order they are written: reverts, money in, money settled, strays. */
  reports: MoneyReport[];
  /** Queued after the reports. */
  sweeps: StraySweep[];
}

/** How one kind of movement is reported. */
interface Rule<M extends LedgerMovement> {
  /** Transitions (on its network) whose event tells it. */
  toldByTransitionTo: readonly SessionStatus[];
  /** Transitions (on its network) whose event tells that it is gone. */
  revertToldByTransitionTo: readonly SessionStatus[];
  /** Its name in funds_reverted. */
  revertedAs: EventDetail<"funds_reverted">["direction"];
  /** Held back (no row, no event) for the transition that always follows. */
  heldBack(known: KnownMoney, m: M): boolean;
  /** Its own event, when no transition tells it. */
  event(m: M, known: KnownMoney): MoneyReasonAndDetail;
}

const RULES: { [D in Direction]: Rule<MovementOf[D]> } = {
  in: {
    toldByTransitionTo: ["FUNDED", "ERROR"],
    revertToldByTransitionTo: ["ERROR"],
    revertedAs: "received",
    // Funds confirmed after a cancel or expiry are about to be told by the paid_after_cancel
    // transition that CANCELED always takes next (decide.ts): not twice.
    heldBack: (known) => known.status === "CANCELED",
    event: (m, known) => ({ reason: "funds_received", detail: receivedDetail(m, known.expiresAt) }),
  },
  out: {
    toldByTransitionTo: ["SUCCEEDED"],
    revertToldByTransitionTo: [],
    revertedAs: "settled",
    // Money settled while FUNDED is told by the SUCCEEDED it leads to.
    heldBack: (known, m) => known.status === "FUNDED" && m.chainId === known.fundingChainId,
    event: (m) => ({ reason: "funds_settled", detail: { chainId: m.chainId, txHash: m.txHash, amountBaseUnits: m.amount.toString() } }),
  },
};

/** The ledger's key of a movement (its primary key within the session); the hash in any case. */
const ledgerKey = (m: { chainId: number; direction: Direction; txHash: string; logIndex: number }) => `${m.chainId}:${m.direction}:${m.txHash.toLowerCase()}:${m.logIndex}`;

const received = (t: Transfer): ReceivedMovement => ({
  direction: "in",
  chainId: t.chainId,
  txHash: t.txHash,
  logIndex: t.logIndex,
  amount: t.value,
  blockTimestamp: t.blockTimestamp,
  method: t.method ?? "transfer",
  payer: t.from,
  token: t.token,
});
const settled = (o: Outflow): SettledMovement => ({ direction: "out", chainId: o.chainId, txHash: o.txHash, logIndex: -1, amount: o.amount });

export function planMoneyReports(known: KnownMoney, movements: StepMovements): MoneyPlan {
  const reports: MoneyReport[] = [];
  const recorded = new Set(known.recorded.map(ledgerKey));
  // The step's transition tells a movement on its network when the rule says it does.
  const t = known.transition;
  const byTransition = (chainId: number, to: readonly SessionStatus[]): ToldBy | undefined =>
    t !== undefined && t.chainId === chainId && to.includes(t.to) ? { by: "transition", eventId: t.eventId } : undefined;

  if (known.status !== "PENDING") {
    // Reported movements the chain took back: said once, and the row marked.
    for (const r of known.recorded) {
      if (r.reverted || movements.present.has(`${r.chainId}:${r.direction}:${r.txHash.toLowerCase()}`)) continue;
      const rule = RULES[r.direction];
      reports.push({
        kind: "revert",
        movement: r,
        toldBy: byTransition(r.chainId, rule.revertToldByTransitionTo) ?? {
          by: "own event",
          event: { reason: "funds_reverted", detail: { chainId: r.chainId, direction: rule.revertedAs, txHash: r.txHash, amountBaseUnits: r.amount } },
        },
      });
    }
    const report = <M extends LedgerMovement>(rule: Rule<M>, fresh: M[]) => {
      for (const m of fresh) {
        if (recorded.has(ledgerKey(m))) continue;
        const told = byTransition(m.chainId, rule.toldByTransitionTo);
        if (!told && rule.heldBack(known, m)) continue;
        reports.push({ kind: "record", movement: m, toldBy: told ?? { by: "own event", event: rule.event(m, known) } });
      }
    };
    report(RULES.in, movements.incoming.map(received));
    report(RULES.out, movements.outgoing.map(settled));
  }

  // Strays, whatever the status, once at their network's depth (none on a network without a
  // deposit): reported, and swept to its settlement address.
  const sweeps: StraySweep[] = [];
  for (const s of movements.strays) {
    const d = known.deposits.find((x) => x.chain_id === s.chainId);
    if (!d || !s.token || s.confirmations < d.confirmations || recorded.has(ledgerKey({ ...s, direction: "in" }))) continue;
    const m: ReceivedMovement = { direction: "in", chainId: s.chainId, txHash: s.txHash, logIndex: s.logIndex, amount: s.value, blockTimestamp: s.blockTimestamp, method: "transfer", token: s.token };
    if (s.from) m.payer = s.from;
    reports.push({ kind: "record", movement: m, toldBy: { by: "own event", event: { reason: "funds_received", detail: { ...receivedDetail(m, known.expiresAt), accepted: false } } } });
    sweeps.push({ chainId: d.chain_id, depositAddress: d.address, settlementAddress: d.settlement_address, tokenAddress: s.token, amount: s.value });
  }
  return { reports, sweeps };
}

/** A `funds_received` event's detail (its statusReason is added by the writer: repository.recordMoneyEvent). */
function receivedDetail(m: ReceivedMovement, expiresAt: Date) {
  return {
    chainId: m.chainId,
    txHash: m.txHash,
    logIndex: m.logIndex,
    amountBaseUnits: m.amount.toString(),
    blockTimestamp: m.blockTimestamp.toISOString(),
    onTime: m.blockTimestamp <= expiresAt,
    method: m.method,
    // Addresses leave the API in EIP-55 checksum form (views.ts).
    ...(m.payer ? { payer: checksumAddress(m.payer) } : {}),
    ...(m.token ? { token: checksumAddress(m.token) } : {}),
  };
}

/** Why money is returned by itself (refunds/logic.ts AUTO_RETURN_REASONS, the refund's `reason`). */
export type ReturnReason = "overpayment" | "late_payment" | "underpaid_expired";

/** An automatic return a step opens: one per session, network and reason (its timer's key). */
export interface ReturnOpened {
  chainId: number;
  reason: ReturnReason;
}

/** What the step left the session as, for returnsOpened. */
export interface StepOutcome {
  status: SessionStatus;
  statusReason: string;
  /** This step's transition's reason, if it had one. */
  transitionReason?: string;
  expiresAt: Date;
}

/** The return a transition opens for the money it tells. */
const RETURN_OF_TRANSITION: Partial<Record<string, ReturnReason>> = { overpaid: "overpayment", underpaid: "underpaid_expired", paid_after_cancel: "late_payment" };

/**
 * Which automatic returns the plan's newly recorded money in opens, per network (how much each
 * gives back is decided when it falls due: refunds/logic.ts autoReturnAmount):
 *   - told by the transition: FUNDED overpaid → overpayment, ERROR underpaid → underpaid_expired,
 *     ERROR paid_after_cancel → late_payment; any other transition (paid, …) → none;
 *   - an event of its own: a block after the expiry → late_payment, whatever the status; on time
 *     while FUNDED or SUCCEEDED (paid twice, or on a second network) → overpayment; on time into
 *     an underpaid session → underpaid_expired; otherwise (ERROR reorged, sweep_failed, …) none:
 *     what such money is for is the merchant's call.
 * A stray token opens none (it is not refundable: the operator recovers it), nor does money out.
 */
export function returnsOpened(plan: MoneyPlan, step: StepOutcome): ReturnOpened[] {
  const out: ReturnOpened[] = [];
  const add = (chainId: number, reason: ReturnReason | undefined) => {
    if (reason && !out.some((o) => o.chainId === chainId && o.reason === reason)) out.push({ chainId, reason });
  };
  for (const r of plan.reports) {
    if (r.kind !== "record" || r.movement.direction !== "in") continue;
    const m = r.movement;
    if (r.toldBy.by === "transition") {
      add(m.chainId, step.transitionReason ? RETURN_OF_TRANSITION[step.transitionReason] : undefined);
      continue;
    }
    const detail = r.toldBy.event.detail as { accepted?: boolean };
    if (detail.accepted === false) continue;
    if (m.blockTimestamp > step.expiresAt) add(m.chainId, "late_payment");
    else if (step.status === "FUNDED" || step.status === "SUCCEEDED") add(m.chainId, "overpayment");
    else if (step.status === "ERROR" && step.statusReason === "underpaid") add(m.chainId, "underpaid_expired");
  }
  return out;
}
