/**
 * The API process's session runner on a thread of its own (a Worker with its own event loop and
 * its own connections), so detecting a payment never waits behind the requests the API is
 * serving: measured with bench/detection.ts at 1,000 creates/s on 2 cores, a runner sharing the
 * API's event loop took ≈ 400 ms from the indexer's NOTIFY to FUNDED committed, one on its own
 * ≈ 50 ms. It dies with the process (no orphan to supervise, unlike a child process); should the
 * thread itself end unasked, it is started again a second later (due times live in the table:
 * nothing is lost meanwhile, and other runners go on).
 *
 * The same SessionRunner as `bun run actors` runs (runner.ts); this file is the host side and,
 * when loaded as the worker, the thread's side.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { RunnerSettings } from "./runner.ts";
import { describeError } from "../../../shared/describe-error.ts";

interface ThreadInput {
  /** Marks a worker as this one (this module is also imported by the host). */
  paysessionRunnerThread: true;
  databaseUrl: string;
  pool: { max: number; connectTimeoutMs: number; statementTimeoutMs: number };
  networks: NetworkConfig[];
  settings: RunnerSettings;
}

type FromThread = { kind: "started" } | { kind: "stopped" } | { kind: "log"; line: string } | { kind: "failed"; message: string };

const RESTART_MS = 1000;

/** The host's handle: started, then stopped (waits for the pass under way, closes its connections). */
export class RunnerThread {
  private worker!: Worker;
  private exited!: Promise<void>;
  private stoppedSignal!: Promise<void>;
  private stopping = false;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    private readonly input: ThreadInput,
    private readonly log: (line: string) => void,
  ) {}

  static async start(input: Omit<ThreadInput, "paysessionRunnerThread">, log: (line: string) => void = () => {}): Promise<RunnerThread> {
    const t = new RunnerThread({ ...input, paysessionRunnerThread: true }, log);
    await t.spawn();
    return t;
  }

  /** Starts a worker and resolves once its runner listens (rejects if it could not). */
  private async spawn(): Promise<void> {
    const worker = new Worker(new URL(import.meta.url), { workerData: this.input });
    let stoppedResolve!: () => void;
    this.stoppedSignal = new Promise<void>((r) => (stoppedResolve = r));
    this.exited = new Promise<void>((r) => worker.once("exit", () => r()));
    this.worker = worker;
    const started = new Promise<void>((resolve, reject) => {
      worker.on("message", (m: FromThread) => {
        if (m.kind === "log") this.log(m.line);
        else if (m.kind === "started") resolve();
        else if (m.kind === "stopped") stoppedResolve();
        else if (m.kind === "failed") reject(new Error(`session runner thread: ${m.message}`));
      });
      worker.on("error", (e) => {
        this.log(`session runner thread failed: ${describeError(e)}`);
        reject(e);
      });
      void this.exited.then(() => reject(new Error("session runner thread exited during start")));
    });
    try {
      await started;
    } catch (e) {
      await worker.terminate();
      throw e;
    }
    void this.exited.then(() => {
      if (this.stopping) return;
      this.log(`session runner thread ended unasked: starting it again in ${RESTART_MS} ms`);
      this.restartTimer = setTimeout(() => this.respawn(), RESTART_MS);
    });
  }

  private respawn(): void {
    if (this.stopping) return;
    this.spawn().catch((e) => {
      this.log(`session runner thread did not start: ${describeError(e)}; again in ${RESTART_MS} ms`);
      if (!this.stopping) this.restartTimer = setTimeout(() => this.respawn(), RESTART_MS);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
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
    post({ kind: "failed", message: describeError(e) });
  }
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadInput> | null)?.paysessionRunnerThread === true) {
  void runThread(workerData as ThreadInput);
}
