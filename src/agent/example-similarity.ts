/**
 * Nearest saved examples of a question. An example is an `example`
 * memory: a question and its confirmed SQL. Candidates are read per scope, the user's own first and
 * then the team's (never another user's), and ranked by similarity on the question text:
 *
 * - with an embedding model: the memory store's `search` (cosine similarity of the question's
 *   embedding and the example's, kinds `['example']`), floor {@link ExampleMatchOptions.minEmbeddingSimilarity};
 * - without one (the model server is down, which is when examples answer alone): word similarity,
 *   the Dice coefficient of the two questions' stemmed content words (see {@link wordSimilarity}),
 *   floor {@link ExampleMatchOptions.minWordSimilarity}.
 *
 * A candidate is relevant only when the tables its SQL reads are all among the tables the schema
 * linker chose for the new question (an example about other tables is never reused or shown).
 */
import type { Memory, MemoryScope, MemorySearchOptions, ScoredMemory } from '../core/memory.js';
import type { DatabaseDialectName } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { contentWords } from '../memory/text.js';
import { findScannedTable, scanLiterals } from '../sql/literal-scan.js';
import { loadSqlParser, parseTree } from '../sql/parse-tree.js';
import { analyzeStatement } from '../sql/scope.js';

/** Where saved examples come from (the memory store fits); only the scopes given are read. */
export interface ExampleSource {
  list(scope: MemoryScope, options: { kinds: ['example']; statuses: ['active'] }): Promise<Memory[]>;
  /** Nearest active memories of the scope by embedding (the store's `search`); absent: words only. */
  search?(scope: MemoryScope, options: MemorySearchOptions): Promise<ScoredMemory[]>;
  /** Whether memory is on for the scope (off: its examples are not used); absent = on. */
  isEnabled?(scope: MemoryScope): Promise<boolean>;
}

/** Thresholds of example matching; every field has a default (see each constant's source). */
export interface ExampleMatchOptions {
  /** Least word similarity (0–1) of a candidate; default {@link DEFAULT_MIN_WORD_SIMILARITY}. */
  minWordSimilarity?: number;
  /** Least embedding similarity (1 − cosine distance) of a candidate; default {@link DEFAULT_MIN_EMBEDDING_SIMILARITY}. */
  minEmbeddingSimilarity?: number;
  /** Most candidates per scope; default {@link DEFAULT_EXAMPLE_TOP_K}. */
  topK?: number;
}

/**
 * Default least word similarity of a candidate example: 0.4. Source: `bench/examples-fallback.ts`,
 * table "Nearest taught example by word similarity", dev half of the defog questions (2026-12-01):
 * the share of nearest examples reading only tables of the gold SQL peaked at 0.4 (30 of 47,
 * 63.8%; 0.3: 58.1%, 0.5: 62.5%, 0.6: 60.0%); held-out at 0.4: 21 of 41 (51.2%). Word similarity
 * is a weak relevance signal, so the linked-table check (below) is required as well.
 */
export const DEFAULT_MIN_WORD_SIMILARITY = 0.4;
/**
 * Default least embedding similarity: 0.6. Not measured (no embedding model runs in the test or
 * bench environment); set above the memory recall floor (0.3, `memoryMinSimilarity`) because an
 * example is shown as a worked answer, not as background. Override with
 * `SQLRECALL_EXAMPLE_MIN_SIMILARITY`.
 */
export const DEFAULT_MIN_EMBEDDING_SIMILARITY = 0.6;
/** Default most candidates per scope: 5 (the memory recall's top-k default). */
export const DEFAULT_EXAMPLE_TOP_K = 5;

/** One candidate example with its similarity and how it was measured. */
export interface SimilarExample {
  memory: Memory;
  similarity: number;
  measure: 'embedding' | 'words';
  /** `user` for the user's own example, `team` for the team's. */
  owner: 'user' | 'team';
}

/**
 * Word similarity of two questions: the Dice coefficient (2·|A∩B| / (|A|+|B|)) of their sets of
 * stemmed content words (`contentWords`: stop words removed). 0 when either has no content word.
 */
export function wordSimilarity(a: string, b: string): number {
  const x = new Set(contentWords(a));
  const y = new Set(contentWords(b));
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const w of x) if (y.has(w)) shared++;
  return (2 * shared) / (x.size + y.size);
}

/**
 * The tables (`schema.name`) an example's SQL (written for `dialect`, default PostgreSQL) reads,
 * or null when any relation does not resolve to one catalog table, a relation was not visited, or
 * the SQL does not parse (such an example is never used: its tables cannot be checked).
 */
export async function exampleTables(
  sql: string,
  schema: Schema,
  dialect: DatabaseDialectName = 'postgres',
): Promise<string[] | null> {
  if (dialect !== 'postgres') {
    // The engine's own tokens (its quoting): a relation that is not read, or not one catalog
    // table (a CTE's name included), leaves the tables unknown.
    const scan = scanLiterals(sql, dialect);
    if (scan.unreadRelations || scan.relations.length === 0) return null;
    const tables = scan.relations.map((r) => findScannedTable(schema, r));
    if (tables.some((t) => t === undefined)) return null;
    return [...new Set(tables.map((t) => `${t!.schema}.${t!.name}`))];
  }
  await loadSqlParser();
  let tree: ReturnType<typeof parseTree>;
  try {
    tree = parseTree(sql);
  } catch {
    return null;
  }
  const stmts = Array.isArray(tree.stmts) ? tree.stmts : [];
  if (stmts.length !== 1) return null;
  const first = stmts[0];
  const stmt = first && typeof first === 'object' && !Array.isArray(first) ? first.stmt : null;
  if (!stmt || typeof stmt !== 'object' || Array.isArray(stmt)) return null;
  const report = analyzeStatement(stmt, schema);
  if (report.unvisitedRelations > 0 || report.relations.some((r) => r.table === null)) return null;
  return [...new Set(report.relations.map((r) => `${r.table!.schema}.${r.table!.name}`))];
}

/** Inputs of {@link nearestExamples}. */
export interface NearestExamplesInput {
  question: string;
  user: string;
  team?: string;
  source?: ExampleSource;
  /** The question's embedding, when an embedding model answers; else word similarity is used. */
  embedding?: number[];
  options?: ExampleMatchOptions;
}

/** Reads one scope's candidates (nothing when memory is off for it). */
async function scopeCandidates(
  source: ExampleSource,
  scope: MemoryScope,
  owner: SimilarExample['owner'],
  input: NearestExamplesInput,
): Promise<SimilarExample[]> {
  if (source.isEnabled && !(await source.isEnabled(scope))) return [];
  const topK = input.options?.topK ?? DEFAULT_EXAMPLE_TOP_K;
  if (input.embedding && source.search) {
    const found = await source.search(scope, {
      embedding: input.embedding,
      kinds: ['example'],
      topK,
      minSimilarity: input.options?.minEmbeddingSimilarity ?? DEFAULT_MIN_EMBEDDING_SIMILARITY,
    });
    return found
      .filter((m) => m.kind === 'example' && m.sql)
      .map(({ similarity, ...memory }) => ({ memory, similarity, measure: 'embedding', owner }));
  }
  const floor = input.options?.minWordSimilarity ?? DEFAULT_MIN_WORD_SIMILARITY;
  const all = await source.list(scope, { kinds: ['example'], statuses: ['active'] });
  return all
    .filter((m) => m.kind === 'example' && m.sql)
    .map((memory) => ({
      memory,
      similarity: wordSimilarity(input.question, memory.text),
      measure: 'words' as const,
      owner,
    }))
    .filter((c) => c.similarity >= floor)
    .sort((a, b) => b.similarity - a.similarity || b.memory.updatedAt.localeCompare(a.memory.updatedAt))
    .slice(0, topK);
}

/**
 * The nearest examples of the user's scope, then the team's, each above its floor, best first
 * within a scope. Another user's examples are never read (the scopes are the only filter passed).
 */
export async function nearestExamples(input: NearestExamplesInput): Promise<SimilarExample[]> {
  if (!input.source) return [];
  const own = await scopeCandidates(input.source, { user: input.user }, 'user', input);
  const team =
    input.team !== undefined ? await scopeCandidates(input.source, { team: input.team }, 'team', input) : [];
  return [...own, ...team];
}

/**
 * The candidates whose SQL reads only tables among `linkedTables` (`schema.name`, compared
 * case-insensitively). Examples whose tables cannot be determined are dropped.
 */
export async function coveredByLinkedTables(
  candidates: SimilarExample[],
  linkedTables: readonly string[],
  schema: Schema,
  dialect: DatabaseDialectName = 'postgres',
): Promise<(SimilarExample & { tables: string[] })[]> {
  const linked = new Set(linkedTables.map((t) => t.toLowerCase()));
  const kept: (SimilarExample & { tables: string[] })[] = [];
  for (const c of candidates) {
    const tables = await exampleTables(c.memory.sql!, schema, dialect);
    if (!tables || tables.length === 0) continue;
    if (tables.every((t) => linked.has(t.toLowerCase()))) kept.push({ ...c, tables });
  }
  return kept;
}
