/**
 * The schema-linking context planner: small schemas go whole (with value hints when they fit);
 * large ones get the tables the question needs — lexical + value matches, dense similarity,
 * recalled memories' tables, join paths — rendered within the token budget, degrading gracefully
 * (fewer sample values, then pruned columns, then fewer tables), never failing.
 */
import type { Schema } from '../core/schema.js';
import { estimateTokens } from '../core/tokens.js';
import { renderSchema } from '../sql/render.js';
import { schemaBudget } from './budget.js';
import { JoinGraph } from './closure.js';
import { fitViews, type PlannedTable } from './fit.js';
import { LexicalIndex } from './lexical.js';
import { isPromptHint, renderView } from './render.js';
import { boostNeighbours, type Candidate, type Choice, chooseTables, rankTables } from './retrieve.js';
import type { IndexedTable, SchemaIndex, SyncReport } from './schema-index.js';
import type { IndexVisibility } from './visibility.js';

/** Extra inputs of one planning call (all optional). */
export interface PlanExtras {
  /** Tables named by the user's recalled memories (`schema.name` or bare names). */
  memoryTables?: readonly string[];
  /** Texts of recalled memories: their words count as weaker evidence. */
  memoryTexts?: readonly string[];
  /** Tokens the caller needs for memories, examples and conversation (lower priority than schema). */
  reservedTokens?: number;
  /**
   * The asking user's view of the shared index, when a data policy applies: the index is synced
   * with `visibility.catalog` (the whole catalog, so one user's sync never drops another's tables)
   * and read through `visibility.tables`; the `schema` argument is then the user's visible catalog.
   */
  visibility?: IndexVisibility;
}

/** The budget a plan was made for. */
export interface PlanBudget {
  /** Model context window (`num_ctx`). */
  contextTokens: number;
  /** Window minus answer reserve, template margin and the rest of the prompt. */
  availableTokens: number;
  /** What the schema part may use. */
  schemaTokens: number;
}

/** A planned context with everything `schema context --json` prints. */
export interface LinkedContext {
  schemaText: string;
  /** Included tables as `schema.name`, most important first. */
  tables: string[];
  /** `whole`: every table (small schema); `linked`: a chosen subset. */
  mode: 'whole' | 'linked';
  /** Estimated tokens of `schemaText`. */
  estimatedTokens: number;
  /** Estimated tokens of the whole schema rendered as today (for comparison). */
  wholeSchemaTokens: number;
  budget: PlanBudget;
  /** Per table: why, which columns are shown, how many hidden, which value hints. */
  choices: PlannedTable[];
  /** Degradation steps applied to fit the budget, in order (empty when none was needed). */
  degradations: string[];
  /** What the index sync did for this call (nothing on later calls with the same schema). */
  index: SyncReport;
}

/** Options of {@link createLinkingPlanner}. */
export interface LinkingPlannerOptions {
  index: SchemaIndex;
  /** Model context window in tokens, or how to get it (see `resolveContextTokens`). */
  contextTokens: number | (() => Promise<number>);
  /** Tokens reserved for the SQL reply; default 1024 (the Assistant's `sqlMaxTokens`). */
  answerReserveTokens?: number;
  /** Tokens of the SQL prompt without schema for `question`; default question + 300. */
  promptOverheadTokens?: (question: string) => number;
  /** Below this many tables the whole schema is sent when it fits; default 30. */
  smallSchemaTables?: number;
  /** Linked mode: fill with further candidates up to this many schema tokens; default 1500. */
  targetSchemaTokens?: number;
  /** Most tables in a linked context; default 24. */
  maxTables?: number;
  /** Always link, even for small schemas (benchmarks); default false. */
  forceLinking?: boolean;
  /** Fill up to the target with further candidates; default true. */
  fill?: boolean;
  /** Most seeds; default 6. Seed threshold as share of the best score; default 0.3. */
  maxSeeds?: number;
  seedRatio?: number;
  /** Most edges on a join path between chosen tables; default 4 (`DEFAULT_MAX_HOPS`). */
  maxHops?: number;
  /** Dense neighbours considered; default 20. */
  denseTopK?: number;
  /** Weight of dense similarity in the fused score; default 0.35. */
  denseWeight?: number;
}

/** A planner callable as the Assistant's `ContextPlanner`, plus the full result. */
export type LinkingPlanner = (
  question: string,
  schema: Schema,
  extras?: PlanExtras,
) => Promise<LinkedContext>;

interface Prepared {
  tables: readonly IndexedTable[];
  lexical: LexicalIndex;
  graph: JoinGraph;
  byKey: Map<string, number>;
  /** Tokens of each table's full rendering (filled lazily). */
  costs: Map<number, number>;
}

/** Creates the planner (see the module comment). */
export function createLinkingPlanner(options: LinkingPlannerOptions): LinkingPlanner {
  const prepared = new WeakMap<readonly IndexedTable[], Prepared>();
  // The whole schema's rendering and its tokens, once per catalog (rendering 100 tables
  // for every question cost ≈ 2 ms of each question's overhead).
  const wholeRendered = new WeakMap<Schema, { wholeText: string; wholeSchemaTokens: number }>();
  const whole = (schema: Schema) => {
    let w = wholeRendered.get(schema);
    if (!w) {
      const wholeText = renderSchema(schema);
      w = { wholeText, wholeSchemaTokens: estimateTokens(wholeText) };
      wholeRendered.set(schema, w);
    }
    return w;
  };
  const prepare = (tables: readonly IndexedTable[]): Prepared => {
    let p = prepared.get(tables);
    if (!p) {
      p = {
        tables,
        lexical: new LexicalIndex(tables),
        graph: new JoinGraph(tables.map((t) => t.table)),
        byKey: new Map(tables.map((t, i) => [t.key, i])),
        costs: new Map(),
      };
      prepared.set(tables, p);
    }
    return p;
  };

  return async (question, schema, extras = {}) => {
    const contextTokens =
      typeof options.contextTokens === 'number' ? options.contextTokens : await options.contextTokens();
    const overhead = options.promptOverheadTokens?.(question) ?? estimateTokens(question) + 300;
    const { availableTokens, schemaTokens } = schemaBudget({
      contextTokens,
      answerReserveTokens: options.answerReserveTokens ?? 1024,
      promptOverheadTokens: overhead,
      reservedTokens: extras.reservedTokens,
    });
    const budget: PlanBudget = { contextTokens, availableTokens, schemaTokens };
    const { wholeText, wholeSchemaTokens } = whole(schema);
    const small =
      !options.forceLinking &&
      ((schema.tables.length < (options.smallSchemaTables ?? 30) && wholeSchemaTokens <= schemaTokens) ||
        wholeSchemaTokens <= availableTokens / 4);

    const indexed = async () =>
      extras.visibility ? await extras.visibility.tables(options.index.tables()) : options.index.tables();
    const synced = extras.visibility?.catalog ?? schema;
    if (small) {
      const report = await options.index.sync(synced, { embed: false });
      const tables = await indexed();
      const all: PlannedTable[] = tables.map((t) => ({
        table: t.key,
        kind: 'whole_schema',
        reasons: ['small schema: every table is sent'],
        columns: t.table.columns.map((c) => c.name),
        omittedColumns: 0,
        valueHints: [],
      }));
      for (const maxValues of [10, 5]) {
        const lines = tables.map((t) => renderView({ table: t.table, hints: t.hints, maxValues }));
        const text = lines.join('\n');
        const tokens = estimateTokens(text);
        if (tokens <= schemaTokens) {
          tables.forEach((t, i) => {
            all[i]!.valueHints = t.hints.filter(isPromptHint).map((h) => h.column);
          });
          return {
            schemaText: text,
            tables: all.map((c) => c.table),
            mode: 'whole',
            estimatedTokens: tokens,
            wholeSchemaTokens,
            budget,
            choices: all,
            degradations: maxValues === 10 ? [] : ['fewer sample values'],
            index: report,
          };
        }
      }
      return {
        schemaText: wholeText,
        tables: all.map((c) => c.table),
        mode: 'whole',
        estimatedTokens: wholeSchemaTokens,
        wholeSchemaTokens,
        budget,
        choices: all,
        degradations: ['no sample values'],
        index: report,
      };
    }

    const report = await options.index.sync(synced);
    const p = prepare(await indexed());
    const hits = p.lexical.search(question, extras.memoryTexts ?? []);
    // The shared index may hold relations this user cannot see: they never become candidates.
    const dense = (await options.index.nearest(question, options.denseTopK ?? 20)).filter((n) =>
      p.byKey.has(n.tableKey),
    );
    const memoryKeys = resolveTables(extras.memoryTables ?? [], p.tables);
    const candidates = boostNeighbours(
      rankTables(p.tables, hits, dense, memoryKeys, { denseWeight: options.denseWeight }),
      p.graph,
    );
    let choices = chooseTables(candidates, p.graph, {
      maxSeeds: options.maxSeeds,
      seedRatio: options.seedRatio,
      maxHops: options.maxHops,
    });
    for (const choice of choices) choice.index = p.byKey.get(choice.key) ?? -1;
    if (choices.length === 0) choices = fallbackChoices(p.tables);
    const target = Math.min(options.targetSchemaTokens ?? 1500, schemaTokens);
    if (options.fill ?? true) fill(choices, candidates, p, target, options.maxTables ?? 24);

    const fitted = fitViews(choices, p, schemaTokens);
    return {
      schemaText: fitted.text,
      tables: fitted.tables.map((t) => t.table),
      mode: 'linked',
      estimatedTokens: estimateTokens(fitted.text),
      wholeSchemaTokens,
      budget,
      choices: fitted.tables,
      degradations: fitted.degradations,
      index: report,
    };
  };
}

/** Memory table names → display keys of the schema (`schema.name`, or a bare name, case-insensitive). */
export function resolveTables(names: readonly string[], tables: readonly IndexedTable[]): Set<string> {
  const keys = new Set<string>();
  for (const raw of names) {
    const name = raw.replaceAll('"', '').trim();
    const exact = tables.find((t) => t.key === name || t.key.toLowerCase() === name.toLowerCase());
    if (exact) {
      keys.add(exact.key);
      continue;
    }
    const byName = tables.filter((t) => t.table.name.toLowerCase() === name.toLowerCase());
    const pick = byName.find((t) => t.table.schema === 'public') ?? byName[0];
    if (pick) keys.add(pick.key);
  }
  return keys;
}

/** No evidence at all ("hello"): the most connected, then largest, tables (at most 5). */
function fallbackChoices(tables: readonly IndexedTable[]): Choice[] {
  return tables
    .map((t, index) => ({ t, index }))
    .sort(
      (a, b) =>
        b.t.incoming.length +
          b.t.table.foreignKeys.length -
          (a.t.incoming.length + a.t.table.foreignKeys.length) ||
        (b.t.table.estimatedRows ?? 0) - (a.t.table.estimatedRows ?? 0) ||
        a.index - b.index,
    )
    .slice(0, 5)
    .map(({ t, index }) => ({
      key: t.key,
      index,
      kind: 'fill' as const,
      reasons: ['no table matched the question: central tables'],
      rank: null,
      matchedColumns: new Map(),
    }));
}

/** Candidates considered for filling (beyond that, scores are noise). */
const FILL_POOL = 80;

/**
 * Adds further tables while the full rendering stays within `target` tokens: the next-ranked
 * candidates and the direct join neighbours of the top seeds, best first.
 */
function fill(
  choices: Choice[],
  candidates: readonly Candidate[],
  p: Prepared,
  target: number,
  maxTables: number,
): void {
  const chosen = new Set(choices.map((c) => c.key));
  const cost = (index: number) => {
    let tokens = p.costs.get(index);
    if (tokens === undefined) {
      const t = p.tables[index]!;
      tokens = estimateTokens(renderView({ table: t.table, hints: t.hints, maxValues: 10 })) + 1;
      p.costs.set(index, tokens);
    }
    return tokens;
  };
  let used = choices.reduce((sum, c) => sum + (c.index >= 0 ? cost(c.index) : 0), 0);
  const best = candidates[0]?.score ?? 1;
  const scoreOf = new Map(candidates.map((c) => [c.key, c.score]));
  const pool: {
    key: string;
    score: number;
    kind: 'fill' | 'neighbour';
    reason: string;
    candidate?: Candidate;
  }[] = [];
  for (const c of candidates.slice(0, FILL_POOL)) {
    if (!chosen.has(c.key) && c.score > 0.05 * best)
      pool.push({ key: c.key, score: c.score, kind: 'fill', reason: '', candidate: c });
  }
  for (const seed of choices.slice(0, 3)) {
    const seedScore = scoreOf.get(seed.key) ?? best;
    for (const edge of p.graph.edges(seed.key)) {
      if (chosen.has(edge.to)) continue;
      pool.push({
        key: edge.to,
        score: 0.4 * seedScore * edge.strength,
        kind: 'neighbour',
        reason: `joins ${seed.key} on ${edge.columns.map(([a, b]) => `${a} = ${b}`).join(', ')}`,
      });
    }
  }
  pool.sort((a, b) => b.score - a.score);
  for (const item of pool) {
    if (choices.length >= maxTables) break;
    if (chosen.has(item.key)) continue;
    const index = p.byKey.get(item.key);
    if (index === undefined) continue;
    const extra = cost(index);
    if (used + extra > target) continue;
    used += extra;
    chosen.add(item.key);
    const reasons = item.candidate
      ? [`next best match (score ${item.score.toFixed(2)})`, ...reasonsShort(item.candidate)]
      : [item.reason];
    choices.push({
      key: item.key,
      index,
      kind: item.kind,
      reasons,
      rank: null,
      matchedColumns: item.candidate?.matchedColumns ?? new Map(),
    });
  }
}

function reasonsShort(c: Candidate): string[] {
  const top = [...c.evidence].sort((a, b) => b.points - a.points)[0];
  if (!top)
    return c.similarity !== null ? [`similar to the question (cosine ${c.similarity.toFixed(2)})`] : [];
  return [top.column ? `${top.field} ${top.column} ~ "${top.term}"` : `${top.field} ~ "${top.term}"`];
}
