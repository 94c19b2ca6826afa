/**
 * The attack corpus (`test/corpus/attacks/attacks.jsonl`): hand-written hostile statements, one
 * JSON record per line, each with the guard rule expected to refuse it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One hostile statement. */
export interface Attack {
  /** Unique, kebab-case. */
  id: string;
  sql: string;
  /** The guard rule id that must refuse it (`GUARD_RULES` ids or the guard's own ids). */
  rule: string;
  /** Files the statement would create if it ran: they must not exist after the corpus. */
  files?: string[];
  /** `skip: why` when the statement must not be sent to a database even without the guard. */
  direct?: string;
  /** Runs until a timeout stops it (PGlite does not enforce statement_timeout). */
  slow?: boolean;
  /**
   * When a model returns this text, the harmless statement the extractor finds in it (e.g.
   * `SELECT 1` before an unterminated comment that hides the rest); it is the only thing run.
   */
  askSql?: string;
}

const FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'corpus', 'attacks', 'attacks.jsonl');

/** Every record of the corpus, in file order. */
export const ATTACKS: Attack[] = readFileSync(FILE, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Attack);

/** Files named by the corpus that exist right now (must be none before and after a run). */
export function existingCorpusFiles(): string[] {
  return ATTACKS.flatMap((a) => a.files ?? []).filter((path) => existsSync(path));
}
