import { expect, test } from "bun:test";
import { relayerVerdict, sessionOverBudget } from "./guard.ts";

const limits = { maxTxPerMinute: 3, maxTxPerHour: 10, maxTxPerSession: 2 };

test("the relayer may send until a minute's or an hour's limit is reached, then waits", () => {
  expect(relayerVerdict({ lastMinute: 2, lastHour: 9 }, limits)).toEqual({ ok: true });
  const minute = relayerVerdict({ lastMinute: 3, lastHour: 3 }, limits);
  expect(minute).toMatchObject({ ok: false, waitMs: 5_000 });
  expect(minute.ok === false && minute.reason).toContain("SERVICE_SWEEP_MAX_TX_PER_MINUTE");
  const hour = relayerVerdict({ lastMinute: 0, lastHour: 10 }, limits);
  expect(hour).toMatchObject({ ok: false, waitMs: 60_000 });
  expect(hour.ok === false && hour.reason).toContain("SERVICE_SWEEP_MAX_TX_PER_HOUR");
});

test("a session gets at most its budget of relayer transactions", () => {
  expect(sessionOverBudget(0, limits)).toBeUndefined();
  expect(sessionOverBudget(1, limits)).toBeUndefined();
  expect(sessionOverBudget(2, limits)).toContain("SERVICE_SWEEP_MAX_TX_PER_SESSION");
});
