/**
 * Fits the chosen tables into the schema budget, degrading step by step and never failing:
 * 1. fewer sample values per column, 2. sample values only for columns the question matched,
 * 3. wide tables pruned to their share of the budget (key, join and matched columns kept),
 * 4. fewer tables (lowest priority first), 5. as a last resort the text is cut to the budget.
 */
import { estimateTokens } from '../core/tokens.js';
import type { JoinGraph } from './closure.js';
import { isPromptHint, rankColumns, renderView, type TableView } from './render.js';
import type { Choice, ChoiceKind } from './retrieve.js';
import type { IndexedTable } from './schema-index.js';

/** One table of a planned context, as `schema context --json` prints it. */
export interface PlannedTable {
  /** `schema.name`. */
  table: string;
  kind: ChoiceKind;
  reasons: string[];
  /**
   * For a table that is on a join path between chosen tables: the path it serves, e.g.
   * `join path: public.customer → public.address → public.city → public.country`.
   */
  role?: string;
  /** Columns shown, in catalog order. */
  columns: string[];
  /** Columns left out to fit the budget. */
  omittedColumns: number;
  /** Columns whose sample values are shown. */
  valueHints: string[];
}

interface Context {
  tables: readonly IndexedTable[];
  graph: JoinGraph;
  byKey: Map<string, number>;
}

interface Level {
  name: string | null;
  maxValues: number;
  matchedValuesOnly: boolean;
  /** Prune columns of tables above `share × schema budget / tables`; `null`: no pruning. */
  share: number | null;
}

const LEVELS: readonly Level[] = [
  { name: null, maxValues: 10, matchedValuesOnly: false, share: null },
  { name: 'fewer sample values', maxValues: 5, matchedValuesOnly: false, share: null },
  { name: 'sample values only for matched columns', maxValues: 5, matchedValuesOnly: true, share: null },
  { name: 'pruned columns', maxValues: 3, matchedValuesOnly: true, share: 1 },
  { name: 'pruned columns further', maxValues: 3, matchedValuesOnly: true, share: 0.6 },
];

/** Fewest columns a pruned table keeps (besides nothing: tables with fewer keep all). */
const MIN_COLUMNS = 3;

/** Renders `choices` within `budgetTokens` (see the module comment). */
export function fitViews(
  choices: readonly Choice[],
  ctx: Context,
  budgetTokens: number,
): { text: string; tables: PlannedTable[]; degradations: string[] } {
  const usable = choices.filter((c) => ctx.byKey.has(c.key));
  const degradations: string[] = [];
  let current = [...usable];
  for (;;) {
    for (const level of LEVELS) {
      const attempt = renderLevel(current, ctx, budgetTokens, level);
      if (estimateTokens(attempt.text) <= budgetTokens) {
        if (level.name) degradations.push(...LEVELS.slice(1, LEVELS.indexOf(level) + 1).map((l) => l.name!));
        if (current.length < usable.length)
          degradations.push(`dropped ${usable.length - current.length} tables`);
        return { ...attempt, degradations: [...new Set(degradations)] };
      }
    }
    if (current.length <= 1) break;
    current = current.slice(0, -1); // choices are in priority order: drop the last
  }
  // Last resort: the top table at the strictest level, cut to the budget.
  const last = renderLevel(current, ctx, budgetTokens, LEVELS.at(-1)!);
  const maxChars = Math.max(0, Math.floor(budgetTokens * 3.5) - 2);
  const text = last.text.length > maxChars ? last.text.slice(0, maxChars) : last.text;
  degradations.push(...LEVELS.slice(1).map((l) => l.name!), 'text cut to the budget');
  if (current.length < usable.length) degradations.push(`dropped ${usable.length - current.length} tables`);
  return { text, tables: last.tables, degradations: [...new Set(degradations)] };
}

function renderLevel(
  choices: readonly Choice[],
  ctx: Context,
  budgetTokens: number,
  level: Level,
): { text: string; tables: PlannedTable[] } {
  const chosen = new Set(choices.map((c) => c.key));
  const lines: string[] = [];
  const tables: PlannedTable[] = [];
  const share =
    level.share === null ? null : Math.max(20, Math.floor((level.share * budgetTokens) / choices.length));
  for (const choice of choices) {
    const indexed = ctx.tables[ctx.byKey.get(choice.key)!]!;
    const matched = new Set(choice.matchedColumns.keys());
    const base: TableView = {
      table: indexed.table,
      hints: indexed.hints,
      maxValues: level.maxValues,
      ...(level.matchedValuesOnly ? { valueColumns: matched } : {}),
    };
    let view = base;
    let line = renderView(view);
    if (share !== null && estimateTokens(line) > share && indexed.table.columns.length > MIN_COLUMNS) {
      const joins = new Set<string>();
      for (const edge of ctx.graph.edges(choice.key)) {
        if (chosen.has(edge.to)) for (const [column] of edge.columns) joins.add(column);
      }
      const ranked = rankColumns(indexed.table, indexed.hints, { matched: choice.matchedColumns, joins });
      // Largest prefix of the ranking that fits the share (binary search), at least MIN_COLUMNS.
      let lo = MIN_COLUMNS;
      let hi = ranked.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const candidate = renderView({ ...base, keep: new Set(ranked.slice(0, mid)) });
        if (estimateTokens(candidate) <= share) lo = mid;
        else hi = mid - 1;
      }
      view = { ...base, keep: new Set(ranked.slice(0, lo)) };
      line = renderView(view);
    }
    lines.push(line);
    const shown = indexed.table.columns.filter((c) => !view.keep || view.keep.has(c.name)).map((c) => c.name);
    const shownSet = new Set(shown);
    tables.push({
      table: choice.key,
      kind: choice.kind,
      reasons: choice.reasons,
      ...(roleOf(choice.reasons) ? { role: roleOf(choice.reasons) } : {}),
      columns: shown,
      omittedColumns: indexed.table.columns.length - shown.length,
      valueHints:
        level.maxValues > 0
          ? indexed.hints
              .filter((h) => isPromptHint(h) && shownSet.has(h.column))
              .filter((h) => !level.matchedValuesOnly || matched.has(h.column))
              .map((h) => h.column)
          : [],
    });
  }
  return { text: lines.join('\n'), tables };
}

/** The `join path: …` reason of a choice, if it has one. */
function roleOf(reasons: readonly string[]): string | undefined {
  return reasons.find((reason) => reason.startsWith('join path: '));
}
