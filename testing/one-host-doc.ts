/**
 * The "One host" walk-through of docs/topology.md as steps a program can follow: the doc is the
 * script, so the doc and `bun run test:one-host` (testing/one-host.ts) cannot drift apart.
 *
 * Its `sh` blocks, in order, are of three kinds, told apart by their first line:
 *   - `# the walk-through's settings`: one `export NAME=value …` line (ports, the data dir); the
 *     runner puts its own values in their place;
 *   - `# terminal NAME, ready at "TEXT"`: one long-running command, in a terminal of its own;
 *     it is up once its output holds TEXT;
 *   - anything else: commands run to the end, which must succeed; each `# → TEXT` line under
 *     them is output they must print.
 */
export type Step =
  | { kind: "settings"; names: string[] }
  | { kind: "terminal"; name: string; readyAt: string; script: string }
  | { kind: "shell"; script: string; expects: string[] };

export const ONE_HOST_HEADING = "## One host: a sandbox cluster";

export function walkThrough(markdown: string): Step[] {
  const start = markdown.indexOf(`\n${ONE_HOST_HEADING}\n`);
  if (start < 0) throw new Error(`no "${ONE_HOST_HEADING}" section`);
  const rest = markdown.slice(start + 1);
  const end = rest.indexOf("\n## ", ONE_HOST_HEADING.length);
  const section = end < 0 ? rest : rest.slice(0, end);
  const steps: Step[] = [];
  for (const m of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = m[1]!.replace(/\n$/, "").split("\n");
    const first = lines[0] ?? "";
    const body = lines.slice(1).join("\n");
    if (first === "# the walk-through's settings") {
      const exported = body.match(/^export ((?:[A-Z0-9_]+=\S+ ?)+)$/);
      if (!exported) throw new Error(`the settings block is not one "export NAME=value …" line: ${body}`);
      steps.push({ kind: "settings", names: exported[1]!.trim().split(" ").map((a) => a.split("=")[0]!) });
      continue;
    }
    const terminal = first.match(/^# terminal ([\w-]+), ready at "([^"]+)"$/);
    if (terminal) {
      steps.push({ kind: "terminal", name: terminal[1]!, readyAt: terminal[2]!, script: body });
      continue;
    }
    const expects = lines.flatMap((l) => (l.startsWith("# → ") ? [l.slice("# → ".length)] : []));
    steps.push({ kind: "shell", script: lines.join("\n"), expects });
  }
  return steps;
}
