/** The delivery rule on its own: each kind of answer, the schedule's end, and a stopping worker. */
import { expect, test } from "bun:test";
import { deliveryOutcome } from "./outcome.ts";

const SCHEDULE = [5_000, 60_000]; // two retries, then the delivery has failed
const answer = (over: Partial<{ succeeded: boolean; gone: boolean; aborted: boolean }> = {}) => ({ succeeded: false, gone: false, aborted: false, ...over });

test("a 2xx succeeds, whatever the attempt", () => {
  expect(deliveryOutcome(answer({ succeeded: true }), 1, SCHEDULE, 0.5)).toEqual({ state: "succeeded" });
  expect(deliveryOutcome(answer({ succeeded: true }), 3, SCHEDULE, 0.5)).toEqual({ state: "succeeded" });
});

test("410 Gone fails the delivery at once and disables the endpoint, even with retries left", () => {
  expect(deliveryOutcome(answer({ gone: true }), 1, SCHEDULE, 0.5)).toEqual({ state: "failed", disableEndpoint: true });
});

test("any other failure waits the schedule's next step (± 20 % jitter), then fails once the schedule is spent", () => {
  expect(deliveryOutcome(answer(), 1, SCHEDULE, 0.5)).toEqual({ state: "pending", delayMs: 5_000 });
  expect(deliveryOutcome(answer(), 1, SCHEDULE, 0)).toEqual({ state: "pending", delayMs: 4_000 });
  expect(deliveryOutcome(answer(), 2, SCHEDULE, 0.5)).toEqual({ state: "pending", delayMs: 60_000 });
  expect(deliveryOutcome(answer(), 3, SCHEDULE, 0.5)).toEqual({ state: "failed", disableEndpoint: false });
});

test("an attempt aborted by a stopping worker is handed back, whatever else it says", () => {
  expect(deliveryOutcome(answer({ aborted: true }), 3, SCHEDULE, 0.5)).toEqual({ state: "handed-back" });
  expect(deliveryOutcome(answer({ aborted: true, gone: true }), 1, SCHEDULE, 0.5)).toEqual({ state: "handed-back" });
});
