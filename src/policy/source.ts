/**
 * The configured policy file over time: loaded on first use, reloaded when it changes on disk
 * (a long-running `serve`), and — when a change makes it invalid — the last valid version kept in
 * force, with the problem reported by {@link PolicySource.status} (health and `doctor`).
 *
 * Failing closed: when the file has never been valid in this process (missing, unreadable, invalid
 * at start) there is no policy to keep, and {@link PolicySource.current} throws instead of letting
 * anyone read unrestricted.
 */
import { createHash } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { SqlrecallError } from '../core/errors.js';
import { loadSqlParser } from '../sql/parse-tree.js';
import {
  type PolicyDocument,
  type PolicyParse,
  type PolicyProblem,
  parsePolicyText,
  policyFormat,
} from './file.js';

/** Where the policy stands, for `/api/health`, `doctor` and `policy check`. */
export interface PolicyStatus {
  /** Absolute path of the file. */
  path: string;
  /**
   * `valid`: the file on disk is in force. `invalid-kept`: the file on disk is invalid; the last
   * valid version stays in force. `invalid`: the file was never valid here; every user is refused.
   * `unloaded`: not read yet.
   */
  state: 'unloaded' | 'valid' | 'invalid-kept' | 'invalid';
  /** When the version in force was loaded (ISO 8601). */
  loadedAt?: string;
  /** When the file was last found invalid (ISO 8601), while it is. */
  failedAt?: string;
  /** The problems of the file on disk, while it is invalid. */
  problems: readonly PolicyProblem[];
  /** Users and teams of the version in force. */
  users?: number;
  teams?: number;
}

/** A change worth a line in the log. */
export interface PolicyEvent {
  kind: 'loaded' | 'reloaded' | 'invalid';
  /** One sentence, naming the file (problems included for `invalid`). */
  message: string;
}

/**
 * Reads a policy file and validates it (loading SQL parser first).
 * @returns the document, or every problem found; a file that cannot be read is one problem
 */
export async function readPolicyFile(path: string): Promise<PolicyParse & { hash?: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : (error as Error).message;
    return { ok: false, problems: [{ path: '(file)', message: `cannot read ${path}: ${why}` }] };
  }
  try {
    await loadSqlParser();
  } catch (error) {
    return {
      ok: false,
      problems: [{ path: '(file)', message: `the SQL parser did not load: ${(error as Error).message}` }],
    };
  }
  const hash = createHash('sha256').update(text).digest('hex');
  return { ...parsePolicyText(text, policyFormat(path)), hash };
}

/** One line listing problems: `users.sam.teams.0: no team sale…; …`. */
export function problemsText(problems: readonly PolicyProblem[], most = 5): string {
  const shown = problems.slice(0, most).map((p) => `${p.path}: ${p.message}`);
  if (problems.length > most) shown.push(`${problems.length - most} more`);
  return shown.join('; ');
}

/** Milliseconds between a change on disk and the reload (editors write a file in several steps). */
const SETTLE_MS = 150;

/** The policy file in force; see the module comment. */
export class PolicySource {
  /** Absolute path of the file. */
  readonly path: string;
  private document: PolicyDocument | undefined;
  private hash: string | undefined;
  private state: PolicyStatus = { path: '', state: 'unloaded', problems: [] };
  private loading: Promise<void> | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Size, modification time and inode of the file when it was last read. */
  private seen: string | undefined;

  /** `onEvent` receives each load, reload and failure (a log line). */
  constructor(
    path: string,
    private readonly onEvent: (event: PolicyEvent) => void = () => {},
  ) {
    this.path = resolve(path);
    this.state.path = this.path;
  }

  /**
   * The document in force, reading the file on first use.
   * @throws SqlrecallError `config` when the file has never been valid in this process (every
   *   user is refused rather than let through unrestricted)
   */
  async current(): Promise<PolicyDocument> {
    // Until a first valid version exists, each use reads the file again: fixing it is enough.
    // Unwatched (a one-user process such as chat or mcp), each use compares the file's size,
    // modification time and inode with the last read (one stat, microseconds) and reads it again
    // when one differs, so a change applies there too.
    if (!this.document || (!this.watcher && (await this.signature()) !== this.seen)) await this.reload();
    if (this.document) return this.document;
    throw new SqlrecallError(
      'config',
      `The policy file ${this.path} is invalid, so no statement runs: ${problemsText(this.state.problems)}.`,
      { details: { setting: 'SQLRECALL_POLICY', hint: 'Run `sqlrecall policy check` for every problem.' } },
    );
  }

  /** Where the policy stands (never throws, reads nothing). */
  status(): PolicyStatus {
    return { ...this.state, problems: [...this.state.problems] };
  }

  /**
   * Reads the file again: a valid file replaces the document in force; an invalid one is recorded
   * and the last valid document stays. Concurrent calls share one read.
   */
  reload(): Promise<void> {
    this.loading ??= this.readNow().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** `size:mtime:inode` of the file, or `missing`. */
  private async signature(): Promise<string> {
    try {
      const s = await stat(this.path);
      return `${s.size}:${s.mtimeMs}:${s.ino}`;
    } catch {
      return 'missing';
    }
  }

  private async readNow(): Promise<void> {
    const first = this.state.state === 'unloaded';
    this.seen = await this.signature();
    const outcome = await readPolicyFile(this.path);
    const now = new Date().toISOString();
    if (outcome.ok) {
      if (outcome.hash === this.hash && this.state.state === 'valid') return; // touched, not changed
      this.document = outcome.document;
      this.hash = outcome.hash;
      this.state = {
        path: this.path,
        state: 'valid',
        loadedAt: now,
        problems: [],
        users: outcome.document.users.size,
        teams: outcome.document.teams.size,
      };
      this.onEvent({
        kind: first ? 'loaded' : 'reloaded',
        message: `policy file ${this.path} ${first ? 'loaded' : 'reloaded'}: ${outcome.document.users.size} user(s), ${outcome.document.teams.size} team(s)`,
      });
      return;
    }
    this.hash = undefined;
    this.state = {
      ...this.state,
      state: this.document ? 'invalid-kept' : 'invalid',
      failedAt: now,
      problems: outcome.problems,
    };
    this.onEvent({
      kind: 'invalid',
      message: `policy file ${this.path} is invalid (${problemsText(outcome.problems)}); ${
        this.document
          ? `the version loaded at ${this.state.loadedAt} stays in force`
          : 'every statement is refused until it is fixed'
      }`,
    });
  }

  /**
   * Reloads the file whenever it changes on disk, until {@link close}. The folder is watched, not
   * the file: editors and `git checkout` replace a file by renaming a new one over it. The watch
   * does not keep the process alive.
   */
  watch(): void {
    if (this.watcher) return;
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.reload().catch(() => {});
      }, SETTLE_MS);
      this.timer.unref();
    });
    this.watcher.on('error', () => {});
  }

  /** Stops watching. */
  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }
}
