/**
 * The API process's session runner on a thread of its own (a Worker with its own event loop and
 * its own connections), so detecting a payment never waits behind the requests the API is
 * serving: measured with bench/detection.ts at 1,000 creates/s on 2 cores, a runner sharing the
 * API's event loop took ≈ 400 ms from the indexer's NOTIFY to FUNDED committed, one on its own
 * ≈ 50 ms. It dies with the process (no orphan to supervise), unlike a child process.
 *
 * The same SessionRunner as `bun run actors` runs (runner.ts); this file is the host side and,
 * when loaded as the worker, the thread's side.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { RunnerSettings } from "./runner.ts";

interface ThreadInput {
  /** Marks a worker as this one (this module is also imported by the host). */
  paysessionRunnerThread: true;
  databaseUrl: string;
  pool: { max: number; connectTimeoutMs: number; statementTimeoutMs: number };
  networks: NetworkConfig[];
  settings: RunnerSettings;
}

type FromThread = { kind: "started" } | { kind: "stopped" } | { kind: "log"; line: string } | { kind: "failed"; message: string };

/** The host's handle: started, then stopped (waits for the pass under way, closes its connections). */
export class RunnerThread {
  private constructor(
    private readonly worker: Worker,
    private readonly exited: Promise<void>,
    private readonly stoppedSignal: Promise<void>,
  ) {}

  static async start(input: Omit<ThreadInput, "paysessionRunnerThread">, log: (line: string) => void = () => {}): Promise<RunnerThread> {
    const worker = new Worker(new URL(import.meta.url), { workerData: { ...input, paysessionRunnerThread: true } satisfies ThreadInput });
    let stoppedResolve!: () => void;
    const stoppedSignal = new Promise<void>((r) => (stoppedResolve = r));
    const exited = new Promise<void>((r) => worker.once("exit", () => r()));
    const started = new Promise<void>((resolve, reject) => {
      worker.on("message", (m: FromThread) => {
        if (m.kind === "log") log(m.line);
        else if (m.kind === "started") resolve();
        else if (m.kind === "stopped") stoppedResolve();
        else if (m.kind === "failed") reject(new Error(`session runner thread: ${m.message}`));
      });
      worker.once("error", (e) => reject(e));
      void exited.then(() => reject(new Error("session runner thread exited during start")));
    });
    try {
      await started;
    } catch (e) {
      await worker.terminate();
      throw e;
    }
    // After start, an error of the thread is logged; the process goes on serving (the runners
    // of other processes, or a restart, step the sessions: their due times live in the table).
    worker.on("error", (e) => log(`session runner thread failed: ${String((e as Error)?.message ?? e)}`));
    return new RunnerThread(worker, exited, stoppedSignal);
  }

  async stop(): Promise<void> {
    this.worker.postMessage("stop");
    await Promise.race([this.stoppedSignal, this.exited]);
    await this.worker.terminate();
  }
}

/** The thread's side: the runner with its own pool, until told to stop. */
async function runThread(input: ThreadInput): Promise<void> {
  const { connect } = await import("../db/client.ts");
  const { SessionRunner } = await import("./runner.ts");
  const post = (m: FromThread) => parentPort!.postMessage(m);
  const log = (line: string) => post({ kind: "log", line });
  try {
    const database = connect(input.databaseUrl, input.pool);
    const runner = new SessionRunner(database.sql, input.networks, input.settings, log);
    await runner.start();
    parentPort!.on("message", async (m) => {
      if (m !== "stop") return;
      await runner.stop().catch(() => {});
      await database.close().catch(() => {});
      post({ kind: "stopped" });
    });
    post({ kind: "started" });
  } catch (e) {
    post({ kind: "failed", message: String((e as Error)?.message ?? e) });
  }
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadInput> | null)?.paysessionRunnerThread === true) {
  void runThread(workerData as ThreadInput);
}
