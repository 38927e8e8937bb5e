/** Which money a step reports and how (money-plan.ts), case by case, as the ledger has always been written. */
import { describe, expect, test } from "bun:test";
import { checksumAddress } from "../../../shared/contracts/keccak.ts";
import type { AuthorizedPayment, Outflow, Transfer } from "./facts.ts";
import type { DepositFact } from "./movements.ts";
import { planMoneyReports, type KnownMoney, type MoneyPlan, type RecordedMovement, type StepMovements } from "./money-plan.ts";

const T0 = new Date("2026-11-21T10:00:00Z");
const EXPIRY = new Date("2026-11-21T10:30:00Z");
const at = (min: number) => new Date(T0.getTime() + min * 60_000);
const AMOUNT = 12_340_000n;
const PAYER = "0x00000000000000000000000000000000000000aa";
const TUSD = "0x00000000000000000000000000000000000000c1";
const USDT = "0x00000000000000000000000000000000000000c2";
const TRANSITION = "evt_transition";

/** Chain 1 at depth 3, chain 8453 at depth 1 (as decide.test.ts). */
const DEPOSITS: DepositFact[] = [
  { chain_id: 1, address: "0x00000000000000000000000000000000000000d1", settlement_address: "0x00000000000000000000000000000000000000e1", token_address: TUSD, required_base_units: AMOUNT.toString(), confirmations: 3 },
  { chain_id: 8453, address: "0x00000000000000000000000000000000000000d2", settlement_address: "0x00000000000000000000000000000000000000e2", token_address: TUSD, required_base_units: AMOUNT.toString(), confirmations: 1 },
];

let n = 0;
const hash = () => `0x${(++n).toString(16).padStart(64, "0")}`;
/** A confirmed payment into chain `chainId`'s deposit address (the actor hands the plan only confirmed ones). */
const payment = (chainId: number, value: bigint, minute = 5, more: Partial<Transfer> = {}): Transfer => ({
  chainId,
  txHash: hash(),
  logIndex: 0,
  value,
  blockTimestamp: at(minute),
  confirmations: 10,
  from: PAYER,
  token: TUSD,
  ...more,
});
const byAuthorization = (chainId: number, value: bigint): AuthorizedPayment => ({ ...payment(chainId, value), from: PAYER, method: "authorization" });
const outflow = (chainId: number, amount: bigint, txHash = hash()): Outflow => ({ chainId, txHash, amount });
/** Money in a token the session does not accept; `value` in its own base units. */
const stray = (chainId: number, value: bigint, confirmations: number, more: Partial<Transfer> = {}): Transfer => ({ ...payment(chainId, value), token: USDT, confirmations, ...more });

/** A ledger row a step before this one wrote. */
const recorded = (m: { chainId: number; txHash: string; logIndex?: number }, direction: "in" | "out", amount: bigint, reverted = false): RecordedMovement => ({
  chainId: m.chainId,
  direction,
  txHash: m.txHash.toLowerCase(),
  logIndex: m.logIndex ?? (direction === "out" ? -1 : 0),
  amount: amount.toString(),
  reverted,
});

const known = (over: Partial<KnownMoney> = {}): KnownMoney => ({ recorded: [], status: "FUNDED", expiresAt: EXPIRY, deposits: DEPOSITS, ...over });
/** This step's transition on `chainId`, to `to` (its event already queued). */
const transition = (to: KnownMoney["status"], chainId: number) => ({ eventId: TRANSITION, to, chainId });

/** What the chain still shows, by default everything handed to the plan plus `alsoPresent` (so nothing recorded is reverted unless left out). */
function seen(over: Partial<Omit<StepMovements, "present">> = {}, alsoPresent: RecordedMovement[] = []): StepMovements {
  const m = { incoming: [], outgoing: [], strays: [], ...over };
  const present = new Set<string>([
    ...[...m.incoming, ...m.strays].map((t) => `${t.chainId}:in:${t.txHash.toLowerCase()}`),
    ...m.outgoing.map((o) => `${o.chainId}:out:${o.txHash.toLowerCase()}`),
    ...alsoPresent.map((r) => `${r.chainId}:${r.direction}:${r.txHash.toLowerCase()}`),
  ]);
  return { ...m, present };
}

const receivedDetail = (t: Transfer, more: Record<string, unknown> = {}) => ({
  chainId: t.chainId,
  txHash: t.txHash,
  logIndex: t.logIndex,
  amountBaseUnits: t.value.toString(),
  blockTimestamp: t.blockTimestamp.toISOString(),
  onTime: t.blockTimestamp <= EXPIRY,
  method: t.method ?? "transfer",
  ...(t.from ? { payer: checksumAddress(t.from) } : {}),
  ...(t.token ? { token: checksumAddress(t.token) } : {}),
  ...more,
});
const nothing: MoneyPlan = { reports: [], sweeps: [] };
/** The plan's reports as [what is written, how it is told], for short expectations. */
const summary = (p: MoneyPlan) => p.reports.map((r) => [`${r.kind} ${r.movement.direction} ${r.movement.chainId}`, r.toldBy.by === "transition" ? "transition" : r.toldBy.event.reason]);

describe("accepted money in", () => {
  test("while PENDING nothing is reported, confirmed or not: the transition still to come (FUNDED, the expiry's) reports it", () => {
    expect(planMoneyReports(known({ status: "PENDING" }), seen({ incoming: [payment(1, AMOUNT / 2n)] }))).toEqual(nothing);
  });

  test("the payment that FUNDED the session: its ledger row, told by the transition's event, no event of its own", () => {
    const p = payment(1, AMOUNT);
    const plan = planMoneyReports(known({ transition: transition("FUNDED", 1) }), seen({ incoming: [p] }));
    expect(plan).toEqual({
      reports: [
        {
          kind: "record",
          movement: { direction: "in", chainId: 1, txHash: p.txHash, logIndex: 0, amount: AMOUNT, blockTimestamp: p.blockTimestamp, method: "transfer", payer: PAYER, token: TUSD },
          toldBy: { by: "transition", eventId: TRANSITION },
        },
      ],
      sweeps: [],
    });
  });

  test("overpaid is FUNDED too: the one payment told by the transition", () => {
    const plan = planMoneyReports(known({ transition: transition("FUNDED", 8453) }), seen({ incoming: [payment(8453, AMOUNT + 5_000_000n)] }));
    expect(summary(plan)).toEqual([["record in 8453", "transition"]]);
  });

  test("partial payments at expiry (ERROR underpaid) and payments after a cancel (ERROR paid_after_cancel) are told by that ERROR", () => {
    const plan = planMoneyReports(known({ status: "ERROR", transition: transition("ERROR", 1) }), seen({ incoming: [payment(1, 1_000_000n), payment(1, 2_000_000n, 40)] }));
    expect(summary(plan)).toEqual([
      ["record in 1", "transition"],
      ["record in 1", "transition"],
    ]);
  });

  test("a second payment on another network than the transition's: funds_received of its own", () => {
    const funding = payment(1, AMOUNT);
    const other = payment(8453, 3_000_000n);
    const plan = planMoneyReports(known({ transition: transition("FUNDED", 1) }), seen({ incoming: [funding, other] }));
    expect(summary(plan)).toEqual([
      ["record in 1", "transition"],
      ["record in 8453", "funds_received"],
    ]);
    expect(plan.reports[1]!.toldBy).toEqual({ by: "own event", event: { reason: "funds_received", detail: receivedDetail(other) } });
  });

  test("a payment confirmed in the step that makes it SUCCEEDED is no part of that transition: funds_received", () => {
    const plan = planMoneyReports(known({ status: "SUCCEEDED", transition: transition("SUCCEEDED", 1) }), seen({ incoming: [payment(1, 1_000_000n)] }));
    expect(summary(plan)).toEqual([["record in 1", "funds_received"]]);
  });

  test("a late payment after SUCCEEDED: funds_received, onTime false; by authorization it says so", () => {
    const late = payment(1, 1_000_000n, 45);
    const signed = byAuthorization(8453, 2_000_000n);
    const plan = planMoneyReports(known({ status: "SUCCEEDED" }), seen({ incoming: [late, signed] }));
    expect(plan.reports.map((r) => r.toldBy)).toEqual([
      { by: "own event", event: { reason: "funds_received", detail: receivedDetail(late) } },
      { by: "own event", event: { reason: "funds_received", detail: receivedDetail(signed) } },
    ]);
    expect((plan.reports[0]!.toldBy as { event: { detail: { onTime: boolean } } }).event.detail.onTime).toBe(false);
    expect(plan.reports[1]!.movement).toMatchObject({ method: "authorization" });
  });

  test("a second token of the network (accepted, at par): reported like any payment, with its token", () => {
    const inUsdt = payment(1, 4_000_000n, 5, { token: USDT });
    const plan = planMoneyReports(known({ status: "SUCCEEDED" }), seen({ incoming: [inUsdt] }));
    expect(plan.reports).toEqual([
      {
        kind: "record",
        movement: { direction: "in", chainId: 1, txHash: inUsdt.txHash, logIndex: 0, amount: 4_000_000n, blockTimestamp: inUsdt.blockTimestamp, method: "transfer", payer: PAYER, token: USDT },
        toldBy: { by: "own event", event: { reason: "funds_received", detail: receivedDetail(inUsdt) } },
      },
    ]);
    expect(plan.reports[0]!.toldBy).toMatchObject({ event: { detail: { token: checksumAddress(USDT) } } });
  });

  test("no sender or token read: the detail leaves them out", () => {
    const bare = payment(1, 1n, 5, { from: undefined, token: undefined });
    const plan = planMoneyReports(known({ status: "ERROR" }), seen({ incoming: [bare] }));
    const detail = (plan.reports[0]!.toldBy as { event: { detail: Record<string, unknown> } }).event.detail;
    expect("payer" in detail || "token" in detail).toBe(false);
  });

  test("held back: money in while CANCELED (here the expiry's step: its transition names no network) waits for the paid_after_cancel that always follows", () => {
    expect(planMoneyReports(known({ status: "CANCELED" }), seen({ incoming: [payment(1, AMOUNT, 31)] }))).toEqual(nothing);
  });

  test("the same movement seen by a later step is not reported again (the hash in any case); another log of its transaction is a movement of its own", () => {
    const p = payment(1, AMOUNT);
    const rows = [recorded(p, "in", AMOUNT)];
    expect(planMoneyReports(known({ status: "SUCCEEDED", recorded: rows }), seen({ incoming: [{ ...p, txHash: p.txHash.toUpperCase().replace("0X", "0x") }] }))).toEqual(nothing);
    const second = { ...p, logIndex: 1 };
    expect(summary(planMoneyReports(known({ status: "SUCCEEDED", recorded: rows }), seen({ incoming: [p, second] })))).toEqual([["record in 1", "funds_received"]]);
  });
});

describe("accepted money settled", () => {
  test("the sweep that made it SUCCEEDED: one row per transaction (log -1), told by the transition", () => {
    const o = outflow(1, AMOUNT);
    const plan = planMoneyReports(known({ status: "SUCCEEDED", transition: transition("SUCCEEDED", 1) }), seen({ outgoing: [o] }));
    expect(plan.reports).toEqual([{ kind: "record", movement: { direction: "out", chainId: 1, txHash: o.txHash, logIndex: -1, amount: AMOUNT }, toldBy: { by: "transition", eventId: TRANSITION } }]);
  });

  test("held back: money settled on the funding network while FUNDED waits for the SUCCEEDED it leads to (a payment by authorization: settled in its FUNDED step)", () => {
    const signed = byAuthorization(1, AMOUNT);
    const plan = planMoneyReports(known({ transition: transition("FUNDED", 1), fundingChainId: 1 }), seen({ incoming: [signed], outgoing: [outflow(1, AMOUNT, signed.txHash)] }));
    expect(summary(plan)).toEqual([["record in 1", "transition"]]);
  });

  test("while FUNDED, money settled on another network than the funding one: funds_settled", () => {
    const o = outflow(8453, 3_000_000n);
    const plan = planMoneyReports(known({ fundingChainId: 1 }), seen({ outgoing: [o] }));
    expect(plan.reports.map((r) => r.toldBy)).toEqual([{ by: "own event", event: { reason: "funds_settled", detail: { chainId: 8453, txHash: o.txHash, amountBaseUnits: "3000000" } } }]);
  });

  test("a later sweep of funds after SUCCEEDED: funds_settled", () => {
    const plan = planMoneyReports(known({ status: "SUCCEEDED", fundingChainId: 1 }), seen({ outgoing: [outflow(1, 3n)] }));
    expect(summary(plan)).toEqual([["record out 1", "funds_settled"]]);
  });

  test("paid by authorization after a cancel: the money in told by paid_after_cancel, its settlement (the same transaction) by funds_settled", () => {
    const signed = byAuthorization(1, AMOUNT);
    const plan = planMoneyReports(known({ status: "ERROR", transition: transition("ERROR", 1) }), seen({ incoming: [signed], outgoing: [outflow(1, AMOUNT, signed.txHash)] }));
    expect(summary(plan)).toEqual([
      ["record in 1", "transition"],
      ["record out 1", "funds_settled"],
    ]);
  });

  test("a settlement already in the ledger is not reported again", () => {
    const o = outflow(1, AMOUNT);
    expect(planMoneyReports(known({ status: "SUCCEEDED", recorded: [recorded(o, "out", AMOUNT)] }), seen({ outgoing: [o] }))).toEqual(nothing);
  });
});

describe("movements the chain took back", () => {
  test("a reported payment gone (reorged out): funds_reverted received, the row marked", () => {
    const row = recorded(payment(1, 1_000_000n), "in", 1_000_000n);
    const plan = planMoneyReports(known({ status: "SUCCEEDED", recorded: [row] }), seen());
    expect(plan).toEqual({
      reports: [{ kind: "revert", movement: row, toldBy: { by: "own event", event: { reason: "funds_reverted", detail: { chainId: 1, direction: "received", txHash: row.txHash, amountBaseUnits: "1000000" } } } }],
      sweeps: [],
    });
  });

  test("a reported settlement gone: funds_reverted settled", () => {
    const row = recorded(outflow(1, AMOUNT), "out", AMOUNT);
    const plan = planMoneyReports(known({ status: "SUCCEEDED", recorded: [row] }), seen());
    expect(plan.reports[0]!.toldBy).toEqual({ by: "own event", event: { reason: "funds_reverted", detail: { chainId: 1, direction: "settled", txHash: row.txHash, amountBaseUnits: AMOUNT.toString() } } });
  });

  test("the funding payment reorged away: told by this step's ERROR on that network (reorged); a settlement gone there, or anything gone elsewhere, has its own event", () => {
    const paid = recorded(payment(1, AMOUNT), "in", AMOUNT);
    const settled = recorded(outflow(1, AMOUNT), "out", AMOUNT);
    const elsewhere = recorded(payment(8453, 5n), "in", 5n);
    const plan = planMoneyReports(known({ status: "ERROR", transition: transition("ERROR", 1), recorded: [paid, settled, elsewhere] }), seen());
    expect(summary(plan)).toEqual([
      ["revert in 1", "transition"],
      ["revert out 1", "funds_reverted"],
      ["revert in 8453", "funds_reverted"],
    ]);
  });

  test("a transition other than ERROR explains no revert", () => {
    const paid = recorded(payment(1, AMOUNT), "in", AMOUNT);
    expect(summary(planMoneyReports(known({ status: "SUCCEEDED", transition: transition("SUCCEEDED", 1), recorded: [paid] }), seen()))).toEqual([["revert in 1", "funds_reverted"]]);
  });

  test("still on the chain in another log of its transaction: not reverted", () => {
    const row = recorded(payment(1, 1n), "in", 1n);
    const other = { ...payment(1, 2n), txHash: row.txHash, logIndex: 1 };
    expect(summary(planMoneyReports(known({ status: "SUCCEEDED", recorded: [row] }), seen({ incoming: [other] })))).toEqual([["record in 1", "funds_received"]]);
  });

  test("said once: a row marked reverted is not reverted again, nor reported anew when its transaction comes back", () => {
    const p = payment(1, 1_000_000n);
    const row = recorded(p, "in", 1_000_000n, true);
    expect(planMoneyReports(known({ status: "SUCCEEDED", recorded: [row] }), seen())).toEqual(nothing);
    expect(planMoneyReports(known({ status: "SUCCEEDED", recorded: [row] }), seen({ incoming: [p] }))).toEqual(nothing);
  });

  test("while PENDING a gone row waits: reverts are told once the session has left PENDING", () => {
    const row = recorded(stray(1, 7n, 3), "in", 7n);
    expect(planMoneyReports(known({ status: "PENDING", recorded: [row] }), seen())).toEqual(nothing);
    expect(summary(planMoneyReports(known({ status: "CANCELED", recorded: [row] }), seen()))).toEqual([["revert in 1", "funds_reverted"]]);
  });

  test("replaced by a new movement (the same money swept again): the old one reverted, the new one reported", () => {
    const old = recorded(outflow(1, AMOUNT), "out", AMOUNT);
    const plan = planMoneyReports(known({ status: "SUCCEEDED", recorded: [old] }), seen({ outgoing: [outflow(1, AMOUNT)] }));
    expect(summary(plan)).toEqual([
      ["revert out 1", "funds_reverted"],
      ["record out 1", "funds_settled"],
    ]);
  });
});

describe("a token the session does not accept (stray)", () => {
  test("at its network's depth, in any status: funds_received accepted false, in its own base units, and swept to the settlement address", () => {
    for (const status of ["PENDING", "FUNDED", "CANCELED"] as const) {
      const s = stray(1, 2_000_000n, 3);
      const plan = planMoneyReports(known({ status }), seen({ strays: [s] }));
      expect(plan).toEqual({
        reports: [
          {
            kind: "record",
            movement: { direction: "in", chainId: 1, txHash: s.txHash, logIndex: 0, amount: 2_000_000n, blockTimestamp: s.blockTimestamp, method: "transfer", payer: PAYER, token: USDT },
            toldBy: { by: "own event", event: { reason: "funds_received", detail: receivedDetail(s, { accepted: false }) } },
          },
        ],
        sweeps: [{ chainId: 1, depositAddress: DEPOSITS[0]!.address, settlementAddress: DEPOSITS[0]!.settlement_address, tokenAddress: USDT, amount: 2_000_000n }],
      });
    }
  });

  test("arriving after settlement: reported and swept all the same, never told by a transition (not even one on its network)", () => {
    const s = stray(8453, 5n, 1, { blockTimestamp: at(50) });
    const plan = planMoneyReports(known({ status: "SUCCEEDED", transition: transition("SUCCEEDED", 8453) }), seen({ strays: [s] }));
    expect(summary(plan)).toEqual([["record in 8453", "funds_received"]]);
    expect(plan.reports[0]!.toldBy).toMatchObject({ event: { detail: { accepted: false, onTime: false } } });
    expect(plan.sweeps).toEqual([{ chainId: 8453, depositAddress: DEPOSITS[1]!.address, settlementAddress: DEPOSITS[1]!.settlement_address, tokenAddress: USDT, amount: 5n }]);
  });

  test("short of its network's depth, on a network the session has no deposit on, or with no token read: nothing yet", () => {
    expect(planMoneyReports(known({ status: "PENDING" }), seen({ strays: [stray(1, 2n, 2)] }))).toEqual(nothing);
    expect(planMoneyReports(known({ status: "PENDING" }), seen({ strays: [stray(10, 2n, 99)] }))).toEqual(nothing);
    expect(planMoneyReports(known({ status: "PENDING" }), seen({ strays: [stray(1, 2n, 9, { token: undefined })] }))).toEqual(nothing);
  });

  test("seen again by a later step: neither reported nor swept again", () => {
    const s = stray(1, 2n, 3);
    expect(planMoneyReports(known({ status: "PENDING", recorded: [recorded(s, "in", 2n)] }), seen({ strays: [s] }))).toEqual(nothing);
  });
});

describe("the plan as a whole", () => {
  test("in the order the ledger has always been written: reverts, money in, money settled, strays; stray sweeps after", () => {
    const gone = recorded(payment(8453, 1n), "in", 1n);
    const plan = planMoneyReports(
      known({ status: "SUCCEEDED", transition: transition("SUCCEEDED", 1), recorded: [gone] }),
      seen({ outgoing: [outflow(1, AMOUNT)], incoming: [payment(1, 2n)], strays: [stray(1, 3n, 3), stray(8453, 4n, 1)] }),
    );
    expect(summary(plan)).toEqual([
      ["revert in 8453", "funds_reverted"],
      ["record in 1", "funds_received"],
      ["record out 1", "transition"],
      ["record in 1", "funds_received"],
      ["record in 8453", "funds_received"],
    ]);
    expect(plan.sweeps.map((s) => [s.chainId, s.amount])).toEqual([
      [1, 3n],
      [8453, 4n],
    ]);
  });

  test("the same inputs give the same plan, and once its rows are in the ledger the next step plans nothing", () => {
    const inputs = [known({ status: "SUCCEEDED", transition: transition("SUCCEEDED", 1) }), seen({ incoming: [payment(1, 2n)], outgoing: [outflow(1, AMOUNT)], strays: [stray(1, 3n, 3)] })] as const;
    const plan = planMoneyReports(...inputs);
    expect(planMoneyReports(...inputs)).toEqual(plan);
    const written = plan.reports.map((r) => recorded(r.movement, r.movement.direction, BigInt(r.movement.amount)));
    expect(planMoneyReports(known({ status: "SUCCEEDED", recorded: written }), inputs[1])).toEqual(nothing);
  });
});
