/**
 * Reading the dashboard's CSV export in tests, the right way and the ways spreadsheets get it wrong.
 *
 * `parseCsv` is RFC 4180 (quoted fields may hold the separator, quotes doubled, line breaks): what
 * a merchant's CSV library reads. `misreadCells` models the readers the export must also survive:
 * a spreadsheet set to another separator (`;` in much of Europe, a tab) that honours a quote only at
 * a cell's start, and one that cuts lines at every line break, quoted or not. A formula guard holds
 * only if none of their cells starts a formula.
 */

/** RFC 4180: the rows of `text`, each a list of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(cur), (cur = "");
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(cur), rows.push(row), (row = []), (cur = "");
    } else cur += ch;
  }
  if (cur !== "" || row.length) row.push(cur), rows.push(row);
  return rows;
}

/** The export as records keyed by its header row. */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(r.map((v, i) => [header![i]!, v])));
}

/** One line split at `sep`, a quote honoured only where a cell starts (as lenient spreadsheets do). */
function cellsOfLine(line: string, sep: string): string[] {
  const cells: string[] = [];
  let i = 0;
  while (i <= line.length) {
    let cell = "";
    if (line[i] === '"') {
      // Quoted: up to the closing quote (doubled quotes are one), then literally to the separator.
      i++;
      while (i < line.length && !(line[i] === '"' && line[i + 1] !== '"')) {
        if (line[i] === '"') i++;
        cell += line[i++];
      }
      i++;
    }
    const end = line.indexOf(sep, i);
    cell += line.slice(i, end === -1 ? line.length : end);
    cells.push(cell);
    if (end === -1) break;
    i = end + sep.length;
  }
  return cells;
}

/** Every cell that some reader of `text` would see: separators `,` `;` and tab; lines cut at quoted breaks or not. */
export function misreadCells(text: string): string[] {
  const byBreaksOnly = text.split(/\r\n|\n|\r/);
  const out: string[] = [];
  for (const sep of [",", ";", "\t"]) for (const line of byBreaksOnly) out.push(...cellsOfLine(line, sep));
  return out;
}

/** A cell a spreadsheet would run: it starts (after spaces) with = + - @, or a tab or CR before one. */
export const startsFormula = (cell: string): boolean => /^[ \t\r]*[=+\-@]/.test(cell);
