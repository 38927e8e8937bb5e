/** Which automatic returns a step's money reports open (money-plan.ts returnsOpened), case by case. */
import { expect, test } from "bun:test";
import type { Transfer } from "./facts.ts";
import type { DepositFact } from "./movements.ts";
import { planMoneyReports, returnsOpened, type KnownMoney } from "./money-plan.ts";

const EXPIRY = new Date("2026-11-21T10:30:00Z");
const onTime = new Date("2026-11-21T10:05:00Z");
const late = new Date("2026-11-21T11:00:00Z");
const TUSD = "0x00000000000000000000000000000000000000c1";
const USDT = "0x00000000000000000000000000000000000000c2";
const DEPOSITS: DepositFact[] = [1, 8453].map((chainId) => ({
  chain_id: chainId,
  address: `0x00000000000000000000000000000000000000d${chainId === 1 ? 1 : 2}`,
  settlement_address: "0x00000000000000000000000000000000000000e1",
  token_address: TUSD,
  required_base_units: "10000000",
  confirmations: 1,
}));
let n = 0;
const pay = (chainId: number, at: Date, token = TUSD): Transfer => ({
  chainId,
  txHash: `0x${(++n).toString(16).padStart(64, "0")}`,
  logIndex: 0,
  value: 1_000_000n,
  blockTimestamp: at,
  confirmations: 5,
  from: "0x00000000000000000000000000000000000000aa",
  token,
});

/** The returns a step opens: its plan, then returnsOpened on it. */
function opened(k: Partial<KnownMoney> & { statusReason: string; transitionReason?: string }, incoming: Transfer[], strays: Transfer[] = []) {
  const known: KnownMoney = { recorded: [], status: "FUNDED", expiresAt: EXPIRY, deposits: DEPOSITS, ...k };
  const present = new Set([...incoming, ...strays].map((t) => `${t.chainId}:in:${t.txHash}`));
  const plan = planMoneyReports(known, { incoming, outgoing: [], strays, present });
  return returnsOpened(plan, { status: known.status, statusReason: k.statusReason, expiresAt: EXPIRY, ...(k.transitionReason ? { transitionReason: k.transitionReason } : {}) });
}
const tr = (to: KnownMoney["status"], chainId = 1) => ({ eventId: "evt_t", to, chainId });

test("FUNDED overpaid opens an overpayment on its network; FUNDED paid opens nothing", () => {
  expect(opened({ status: "FUNDED", statusReason: "overpaid", transitionReason: "overpaid", transition: tr("FUNDED") }, [pay(1, onTime)])).toEqual([{ chainId: 1, reason: "overpayment" }]);
  expect(opened({ status: "FUNDED", statusReason: "paid", transitionReason: "paid", transition: tr("FUNDED") }, [pay(1, onTime)])).toEqual([]);
});

test("ERROR underpaid opens underpaid_expired; ERROR paid_after_cancel opens late_payment", () => {
  expect(opened({ status: "ERROR", statusReason: "underpaid", transitionReason: "underpaid", transition: tr("ERROR") }, [pay(1, onTime)])).toEqual([{ chainId: 1, reason: "underpaid_expired" }]);
  expect(opened({ status: "ERROR", statusReason: "paid_after_cancel", transitionReason: "paid_after_cancel", transition: tr("ERROR") }, [pay(1, onTime)])).toEqual([{ chainId: 1, reason: "late_payment" }]);
});

test("money of its own event: late after the expiry in any status; on time while paid is an overpayment", () => {
  expect(opened({ status: "SUCCEEDED", statusReason: "swept" }, [pay(1, late)])).toEqual([{ chainId: 1, reason: "late_payment" }]);
  expect(opened({ status: "ERROR", statusReason: "underpaid" }, [pay(1, late)])).toEqual([{ chainId: 1, reason: "late_payment" }]);
  expect(opened({ status: "FUNDED", statusReason: "paid" }, [pay(8453, onTime)])).toEqual([{ chainId: 8453, reason: "overpayment" }]);
});

test("a session in ERROR for another reason (reorged, sweep_failed) opens nothing for on-time money: the merchant decides", () => {
  expect(opened({ status: "ERROR", statusReason: "reorged" }, [pay(1, onTime)])).toEqual([]);
});

test("one return per network and reason however many payments; a stray token opens none", () => {
  expect(opened({ status: "SUCCEEDED", statusReason: "swept" }, [pay(1, late), pay(1, late), pay(8453, late)])).toEqual([
    { chainId: 1, reason: "late_payment" },
    { chainId: 8453, reason: "late_payment" },
  ]);
  expect(opened({ status: "SUCCEEDED", statusReason: "swept" }, [], [pay(1, late, USDT)])).toEqual([]);
});

test("while PENDING, or money held back while CANCELED, nothing is opened (the transition that follows opens it)", () => {
  expect(opened({ status: "PENDING", statusReason: "created" }, [pay(1, onTime)])).toEqual([]);
  expect(opened({ status: "CANCELED", statusReason: "expired" }, [pay(1, late)])).toEqual([]);
});
