import { expect, test } from "bun:test";
import { deliveryProblems, historyProblems } from "./suite-checks.ts";

const h = (sequence: number, status: string, reason = "paid") => ({ sequence, status, reason });

test("a history passes with sequences 1..n and each status once; a money event is no transition", () => {
  const history = [h(1, "PENDING", "created"), h(2, "FUNDED"), h(3, "FUNDED", "funds_received"), h(4, "SUCCEEDED", "swept")];
  expect(historyProblems("ps_1", history, ["PENDING", "FUNDED", "SUCCEEDED"])).toEqual([]);
});

test("a doubled status, a gap in the sequences and unexpected transitions are each reported", () => {
  expect(historyProblems("ps_1", [h(1, "PENDING", "created"), h(2, "FUNDED"), h(3, "FUNDED")])).toEqual(["ps_1: a status recorded twice (PENDING → FUNDED → FUNDED)"]);
  expect(historyProblems("ps_1", [h(1, "PENDING", "created"), h(3, "FUNDED")])).toEqual(["ps_1: sequences 1,3"]);
  expect(historyProblems("ps_1", [h(1, "PENDING", "created"), h(2, "CANCELED")], ["PENDING", "FUNDED", "SUCCEEDED"])).toEqual([
    "ps_1: transitions PENDING → CANCELED, expected PENDING → FUNDED → SUCCEEDED",
  ]);
});

test("every event delivered, first deliveries in order; redeliveries of an earlier event are fine", () => {
  const events = [1, 2, 3].map((sequence) => ({ sessionId: "ps_1", sequence }));
  const d = (sequence: number) => ({ id: `msg_${sequence}`, sessionId: "ps_1", sequence });
  expect(deliveryProblems(events, [d(1), d(2), d(1), d(3)])).toEqual([]);
  expect(deliveryProblems(events, [d(1), d(3)])).toEqual(["event ps_1#2 never delivered"]);
  expect(deliveryProblems(events, [d(1), d(3), d(2)])).toEqual(["ps_1: first deliveries out of order (1,3,2)"]);
});
