/**
 * Every setting of sqlrecall, declared once: its environment variable, its command-line flag (if
 * any), its validator, its default and its help text. From this one table come the `Config` type
 * and its loading (`config.ts`), the global options and their help (`cli/program.ts`), the mapping of
 * parsed options back to settings (`cli/config-from.ts`) and the README's settings table
 * (`scripts/settings-doc.ts`).
 *
 * This module loads no validation library at run time: a validator is a function that receives zod
 * and builds its schema, called only by `loadConfig`. So `--version` and `--help`, which need the
 * flags and the help text, start without loading zod.
 */
import { userInfo } from 'node:os';
import type { z as Zod } from 'zod';
import { USER_NAME_PATTERN, USER_NAME_RULE } from '../core/limits.js';
import { DEFAULT_MEMORY_TOP_K } from '../core/memory.js';
import { DEFAULT_OLLAMA_HOST } from '../core/model-names.js';
import { duckdbPathOf } from '../databases/duckdb/url.js';
import { parseThresholdTable } from '../memory/thresholds.js';

/** The zod namespace a validator receives. */
export type ZodApi = typeof Zod;

/**
 * One setting.
 * - `env`: its environment variable (also read from `.env`).
 * - `flag`: its global command-line option in commander's form: `--name <value>` takes a value,
 *   `--no-name` (no value) passes {@link SettingDeclaration.flagValue} when given.
 * - `hidden`: the flag is accepted but left out of `--help`.
 * - `schema`: builds the validator; its output type is the setting's type in `Config`.
 * - `default`: the raw value validated when neither flag, environment nor `.env` sets the setting;
 *   a function is called at each load (values that depend on the machine); undefined: unset.
 * - `defaultText`: how the README and the help show the default, when `default` alone says too
 *   little (a function, a byte count, "every schema").
 * - `help`: one line for `--help` and the README.
 */
export interface SettingDeclaration<S extends Zod.ZodType = Zod.ZodType> {
  readonly env: string;
  readonly flag?: string;
  readonly flagValue?: string;
  readonly hidden?: boolean;
  readonly schema: (z: ZodApi) => S;
  readonly default?: string | number | (() => string);
  readonly defaultText?: string;
  readonly help: string;
}

/** Identity that keeps each declaration's schema and flag types for {@link Config}. */
function setting<const F extends string | undefined, S extends Zod.ZodType>(
  declaration: SettingDeclaration<S> & { readonly flag?: F },
): SettingDeclaration<S> & { readonly flag?: F } {
  return declaration;
}

const intError = (min: number, max: number) => `expected a whole number between ${min} and ${max}`;

/** A whole number from `min` to `max` (strings are converted). */
const int = (z: ZodApi, min: number, max: number) =>
  z.coerce
    .number({ error: intError(min, max) })
    .int({ error: intError(min, max) })
    .min(min, { error: intError(min, max) })
    .max(max, { error: intError(min, max) });

/** A number from `min` to `max` (strings are converted). */
const between = (z: ZodApi, min: number, max: number) => {
  const error = `expected a number between ${min} and ${max}`;
  return z.coerce.number({ error }).min(min, { error }).max(max, { error });
};

/**
 * True for a DuckDB target: `duckdb:…`, or a plain path to a data file, a `.duckdb` file or an
 * existing folder. A plain path to a SQLite file passes too, so that opening it says to write
 * `sqlite:PATH`.
 */
function isDuckdbTarget(value: string): boolean {
  try {
    return duckdbPathOf(value) !== undefined;
  } catch {
    return true;
  }
}

const dbUrl = (z: ZodApi) =>
  z
    .string()
    .trim()
    .refine(
      (v) => /^(postgres|postgresql|mysql|mariadb):\/\/|^(pglite|sqlite):/i.test(v) || isDuckdbTarget(v),
      {
        error:
          'expected a URL starting with postgres://, postgresql://, pglite:, mysql://, mariadb://, sqlite: or duckdb:, or a data file or folder',
      },
    )
    .refine((v) => !/^postgres(ql)?:/i.test(v) || URL.canParse(v), { error: 'expected a valid URL' });

const httpUrl = (z: ZodApi) =>
  z
    .string()
    .trim()
    .transform((v) => (/^https?:\/\//i.test(v) ? v : `http://${v}`))
    .refine((v) => URL.canParse(v), { error: 'expected an http:// or https:// URL' })
    .transform((v) => v.replace(/\/+$/, ''));

const name = (z: ZodApi) => z.string().trim().min(1, { error: 'must not be empty' });

const splitList = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A comma-separated list (entries trimmed, empty ones dropped) whose every entry matches `entry`. */
const commaList = (z: ZodApi, entry: RegExp, error: string) =>
  z
    .string()
    // Only commas or blanks (`,`, ` , `, a template of empty variables) names nothing: an error,
    // never silently "no list", which would open every table or function.
    .refine((text) => text.trim() === '' || splitList(text).length > 0, {
      error: 'the list names nothing (only commas or blanks); leave it unset for none',
    })
    .transform(splitList)
    .refine((list) => list.every((item) => entry.test(item)), { error });

/**
 * The settings table. Its order is the order of the global options in `--help` and of the README's
 * table. The TSDoc of each key is what the `Config` property shows.
 */
export const SETTINGS = {
  /**
   * The database to question: `postgres://…`, `postgresql://…`, `pglite:DIR`, `mysql://…`,
   * `mariadb://…`, `sqlite:PATH`, `duckdb:PATH`, or a CSV/Parquet/JSON file or folder. Undefined until set.
   */
  databaseUrl: setting({
    env: 'DATABASE_URL',
    flag: '--db <url>',
    schema: (z) => dbUrl(z).optional(),
    defaultText:
      'none (`postgres://…`, `pglite:DIR`, `mysql://…`, `sqlite:PATH`, `duckdb:PATH`, a data folder)',
    help: 'database to question: postgres://…, pglite:DIR, mysql://…, sqlite:PATH, duckdb:PATH or a CSV/Parquet folder',
  }),
  /** The user whose memories apply. Default: the OS user name. */
  user: setting({
    env: 'SQLRECALL_USER',
    flag: '--user <id>',
    // The rule `users add` applies: a name it refuses would never match an account or a policy entry.
    schema: (z) =>
      z
        .string()
        .min(1, { error: 'must not be empty' })
        .regex(USER_NAME_PATTERN, { error: `a user name is ${USER_NAME_RULE}` }),
    default: osUserName,
    defaultText: 'your OS user name',
    help: 'user whose memories apply',
  }),
  /** Chat model. Default `qwen2.5-coder:7b`. */
  model: setting({
    env: 'SQLRECALL_MODEL',
    flag: '--model <name>',
    schema: name,
    default: 'qwen2.5-coder:7b',
    help: 'chat model',
  }),
  /** Embedding model. Default `all-minilm` (384 dimensions). */
  embedModel: setting({
    env: 'SQLRECALL_EMBED_MODEL',
    flag: '--embed-model <name>',
    schema: name,
    default: 'all-minilm',
    help: 'embedding model',
  }),
  /** Ollama base URL. Default `http://127.0.0.1:11434`. */
  ollamaHost: setting({
    env: 'OLLAMA_HOST',
    flag: '--ollama-host <url>',
    schema: httpUrl,
    default: DEFAULT_OLLAMA_HOST,
    help: 'Ollama server',
  }),
  /** Data folder (demo database, embedded memory store), absolute. Default `~/.sqlrecall`. */
  home: setting({
    env: 'SQLRECALL_HOME',
    flag: '--home <dir>',
    schema: name,
    default: '~/.sqlrecall',
    help: 'data folder (demo database, embedded memory store)',
  }),
  /** Row cap per statement. Default 1000. */
  maxRows: setting({
    env: 'SQLRECALL_MAX_ROWS',
    flag: '--max-rows <n>',
    schema: (z) => int(z, 1, 1_000_000),
    default: 1000,
    help: 'row cap per query',
  }),
  /** Statement timeout in milliseconds. Default 30000 (30 s). */
  statementTimeoutMs: setting({
    env: 'SQLRECALL_STATEMENT_TIMEOUT_MS',
    flag: '--timeout-ms <ms>',
    schema: (z) => int(z, 100, 86_400_000),
    default: 30_000,
    help: 'statement timeout in milliseconds',
  }),
  /**
   * Byte budget of one result (UTF-8 text of its values), enforced while rows stream from the
   * cursor. Default 64 MiB.
   */
  maxResultBytes: setting({
    env: 'SQLRECALL_MAX_RESULT_BYTES',
    flag: '--max-result-bytes <n>',
    schema: (z) => int(z, 1024, 1024 ** 4),
    default: 64 * 1024 * 1024,
    defaultText: '`67108864` (64 MiB)',
    help: 'byte budget per result',
  }),
  /** Schemas to introspect; empty → every non-system schema. */
  schemas: setting({
    env: 'SQLRECALL_SCHEMAS',
    flag: '--schemas <list>',
    schema: (z) => z.string().transform(splitList),
    default: '',
    defaultText: 'every non-system schema',
    help: 'schemas to read, comma-separated',
  }),
  /** The user's team: its shared memories apply too. Default none. */
  team: setting({
    env: 'SQLRECALL_TEAM',
    flag: '--team <id>',
    schema: (z) => z.string().min(1, { error: 'must not be empty' }).optional(),
    defaultText: 'none',
    help: 'team whose shared memories apply',
  }),
  /** Long-term memory on (default) or off for every user of this process (`--no-memory`). */
  memoryEnabled: setting({
    env: 'SQLRECALL_MEMORY',
    flag: '--no-memory',
    flagValue: 'off',
    schema: (z) =>
      z
        .enum(['on', 'off', 'true', 'false', '1', '0', 'yes', 'no'], { error: 'expected on or off' })
        .transform((v) => ['on', 'true', '1', 'yes'].includes(v)),
    default: 'on',
    help: 'long-term memory on or off (the flag: off for this run)',
  }),
  /**
   * Allowlist mode: the only relations queries may read, as `schema.table`, `schema.*` or `table`
   * (comma-separated in the flag/variable). Empty (default) → no allowlist.
   */
  allowTables: setting({
    env: 'SQLRECALL_ALLOW_TABLES',
    flag: '--allow-tables <list>',
    schema: (z) =>
      commaList(
        z,
        // A part is a "quoted" name or a plain identifier (letters, digits, _ and $); `*` only
        // as the table of schema.*: anything else could never match a table, so it is a typo.
        /^("(?:[^"]|"")+"|[\p{L}\p{N}_$]+)(\.("(?:[^"]|"")+"|[\p{L}\p{N}_$]+|\*))?$/u,
        'expected schema.table, schema.* or table names, comma-separated',
      ),
    default: '',
    defaultText: 'none: every table',
    help: 'only these tables may be read: schema.table,schema2.*',
  }),
  /**
   * Functions outside `pg_catalog` allowed without the function policy's checks, as `schema.name`
   * or `name` patterns (`*` wildcard). Empty (default) → every such function must be IMMUTABLE or
   * STABLE, not SECURITY DEFINER, and from no denied extension.
   */
  allowFunctions: setting({
    env: 'SQLRECALL_ALLOW_FUNCTIONS',
    flag: '--allow-functions <list>',
    schema: (z) =>
      commaList(z, /^[^\s.,]+(\.[^\s.,]+)?$/, 'expected schema.function or function names, comma-separated'),
    default: '',
    defaultText: 'none',
    help: 'functions outside pg_catalog allowed even when VOLATILE, SECURITY DEFINER or from a remote-access extension: schema.fn,fn',
  }),
  /**
   * The data policy file (YAML or JSON, `docs/policies.md`): which tables, columns and rows each
   * user may read. Undefined (default): no policy, every table the connection role can read.
   */
  policy: setting({
    env: 'SQLRECALL_POLICY',
    flag: '--policy <file>',
    schema: (z) => z.string().trim().min(1, { error: 'must not be empty' }).optional(),
    defaultText: 'none: every table the connection role can read',
    help: 'data policy file (YAML or JSON): tables, columns and rows each user may read',
  }),
  /**
   * Most tokens of the model's SQL reply (`num_predict`). Default 1024. A reply cut at this limit is
   * retried once with four times as many (at most 8192), then fails naming this setting.
   */
  maxSqlTokens: setting({
    env: 'SQLRECALL_MAX_SQL_TOKENS',
    flag: '--max-sql-tokens <n>',
    schema: (z) => int(z, 64, 32_768),
    default: 1024,
    help: 'most tokens of the SQL reply',
  }),
  /**
   * Seconds a one-shot command (`ask`, `sql`) leaves the embedded stores it had to start open in a
   * background `sqlrecall hold` process, so the next command reaches them through its socket instead
   * of starting PGlite again. The holder exits after this many seconds with no client. Default 0:
   * off (nothing outlives the command).
   */
  keepWarmSeconds: setting({
    env: 'SQLRECALL_KEEP_WARM',
    flag: '--keep-warm <seconds>',
    schema: (z) => int(z, 0, 86_400),
    default: 0,
    defaultText: '`0` (off)',
    help: 'after ask or sql, keep the embedded stores open in the background this many seconds, so the next command starts sooner',
  }),
  /**
   * Model backend: `ollama` (Ollama's own API at `ollamaHost`) or `openai` (any OpenAI-compatible
   * server at `baseUrl`: llama.cpp, LM Studio, vLLM, LocalAI, Jan, Ollama `/v1`). Default `ollama`.
   */
  provider: setting({
    env: 'SQLRECALL_PROVIDER',
    flag: '--provider <name>',
    schema: (z) => z.enum(['ollama', 'openai'], { error: 'expected ollama or openai' }),
    default: 'ollama',
    help: 'model backend: ollama or openai (any OpenAI-compatible server)',
  }),
  /** Base URL of the OpenAI-compatible server, with `/v1`. Default `http://127.0.0.1:8080/v1` (llama-server). */
  baseUrl: setting({
    env: 'SQLRECALL_BASE_URL',
    flag: '--base-url <url>',
    schema: httpUrl,
    default: 'http://127.0.0.1:8080/v1',
    help: 'OpenAI-compatible server, with /v1',
  }),
  /** Context length of the chat model when the OpenAI-compatible server does not report one. */
  contextLength: setting({
    env: 'SQLRECALL_CONTEXT_LENGTH',
    flag: '--context-length <tokens>',
    hidden: true,
    schema: (z) => int(z, 512, 10_485_760).optional(),
    defaultText: 'what the server reports',
    help: 'chat model context when an OpenAI-compatible server does not report it',
  }),
  /** Fixed model context (`num_ctx`); undefined → sized to each prompt. */
  numCtx: setting({
    env: 'SQLRECALL_NUM_CTX',
    flag: '--num-ctx <tokens>',
    hidden: true,
    schema: (z) => int(z, 512, 1_048_576).optional(),
    defaultText: 'sized to each prompt',
    help: 'fixed Ollama context size',
  }),
  /** Most repair attempts after a database error. Default 2. */
  maxRepairs: setting({
    env: 'SQLRECALL_MAX_REPAIRS',
    flag: '--max-repairs <n>',
    hidden: true,
    schema: (z) => int(z, 0, 10),
    default: 2,
    help: 'repair attempts after a database error',
  }),
  /** Log level for stderr logs. Default `warn`. */
  logLevel: setting({
    env: 'SQLRECALL_LOG_LEVEL',
    flag: '--log-level <level>',
    hidden: true,
    schema: (z) => z.enum(['silent', 'error', 'warn', 'info', 'debug']),
    default: 'warn',
    help: 'stderr log level: silent, error, warn, info or debug',
  }),
  /** Memory store; undefined → embedded PGlite under `home`. */
  memoryDatabaseUrl: setting({
    env: 'MEMORY_DATABASE_URL',
    schema: (z) => dbUrl(z).optional(),
    defaultText: 'embedded under `SQLRECALL_HOME`',
    help: 'memory store: postgres://… with the vector extension, or pglite:DIR',
  }),
  /** Bearer token for OpenAI-compatible servers that want one (environment only). Never printed. */
  apiKey: setting({
    env: 'SQLRECALL_API_KEY',
    schema: (z) => z.string().trim().optional(),
    defaultText: 'none',
    help: 'API key sent to the OpenAI-compatible server (never printed)',
  }),
  /**
   * HTTP API: most `POST /api/sql` and `POST /api/ask` requests one user may have running at once;
   * one more is answered 429. Default 4.
   */
  maxRequestsPerUser: setting({
    env: 'SQLRECALL_MAX_REQUESTS_PER_USER',
    schema: (z) => int(z, 1, 1000),
    default: 4,
    help: 'statements or questions one user runs at once on `serve` (429 past it)',
  }),
  /**
   * Worker threads that parse and check long statements off the server's main thread
   * (`sql/check-pool.ts`); 0: on the main thread. Undefined (default): one per CPU but one, 1–4.
   */
  checkThreads: setting({
    env: 'SQLRECALL_CHECK_THREADS',
    schema: (z) => int(z, 0, 64).optional(),
    defaultText: 'CPUs − 1 (1–4)',
    help: 'threads `serve` parses long statements on (`0`: the main thread)',
  }),
  /**
   * Days the audit trail keeps a record of a statement run or refused; older records are deleted
   * when the audit table is opened. Default 90.
   */
  auditRetentionDays: setting({
    env: 'SQLRECALL_AUDIT_RETENTION_DAYS',
    schema: (z) => int(z, 1, 36_500),
    default: 90,
    help: 'days the audit trail keeps each statement run or refused',
  }),
  /** Most facts learned from one message. Default 2. */
  memoryMaxFacts: setting({
    env: 'SQLRECALL_MEMORY_MAX_FACTS',
    schema: (z) => int(z, 1, 10),
    default: 2,
    help: 'most facts learned from one message',
  }),
  /** Similarity recall of terms/metrics/entities: top-k (default 5) … */
  memoryTopK: setting({
    env: 'SQLRECALL_MEMORY_TOP_K',
    schema: (z) => int(z, 1, 50),
    default: DEFAULT_MEMORY_TOP_K,
    help: 'memories recalled by similarity',
  }),
  /** … and least similarity, 1 − cosine distance (default 0.3). */
  memoryMinSimilarity: setting({
    env: 'SQLRECALL_MEMORY_MIN_SIMILARITY',
    schema: (z) => between(z, -1, 1),
    default: 0.3,
    help: 'least similarity (1 − cosine distance) of a recalled memory',
  }),
  /**
   * Reconciliation thresholds per embedding model, `model=low:high` comma-separated (`*` for any
   * other model). Empty → 0.70:0.95 for every model.
   */
  memoryThresholds: setting({
    env: 'SQLRECALL_MEMORY_THRESHOLDS',
    schema: (z) =>
      z.string().refine((v) => parseThresholdTable(v) !== undefined, {
        error: 'expected model=low:high pairs, e.g. all-minilm=0.70:0.95',
      }),
    default: '',
    defaultText: '`0.70:0.95` for every model',
    help: 'reconciliation thresholds per embedding model, e.g. `all-minilm=0.70:0.95`',
  }),
  /**
   * Least embedding similarity (1 − cosine distance) of a saved example shown to the model
   * (few-shot). Default 0.6 (`DEFAULT_MIN_EMBEDDING_SIMILARITY`).
   */
  exampleMinSimilarity: setting({
    env: 'SQLRECALL_EXAMPLE_MIN_SIMILARITY',
    schema: (z) => between(z, -1, 1),
    default: 0.6,
    help: 'least embedding similarity of a saved example shown to the model',
  }),
  /**
   * Least word similarity (Dice of content words, 0–1) of a saved example when no embedding model
   * answers. Default 0.4, measured by bench/examples-fallback.ts (`DEFAULT_MIN_WORD_SIMILARITY`).
   */
  exampleMinWordSimilarity: setting({
    env: 'SQLRECALL_EXAMPLE_MIN_WORD_SIMILARITY',
    schema: (z) => between(z, 0, 1),
    default: 0.4,
    help: 'least word similarity of a saved example when no embedding model answers',
  }),
  /** Most saved examples in the SQL prompt (few-shot); 0 turns few-shot off. Default 3. */
  fewShotMax: setting({
    env: 'SQLRECALL_FEW_SHOT_MAX',
    schema: (z) => int(z, 0, 10),
    default: 3,
    help: 'most saved examples in the SQL prompt (`0`: off)',
  }),
  /**
   * Milliseconds a chat call may wait for its first token before failing with `model_timeout`
   * (then the question is answered from examples and rules if one fits). Default 300,000; 0: none.
   */
  modelTimeoutMs: setting({
    env: 'SQLRECALL_MODEL_TIMEOUT_MS',
    schema: (z) => int(z, 0, 86_400_000),
    default: 300_000,
    help: "wait in ms for the model's first sign of life (any content or reasoning token; `0`: none)",
  }),
  /**
   * Milliseconds a chat reply that started streaming may stay silent (no content or reasoning
   * token) before failing with `model_timeout`: a hung model. Default 120,000; 0: none.
   */
  modelIdleTimeoutMs: setting({
    env: 'SQLRECALL_MODEL_IDLE_TIMEOUT_MS',
    schema: (z) => int(z, 0, 86_400_000),
    default: 120_000,
    help: 'longest silence in ms of a reply that started streaming (a hung model; `0`: none)',
  }),
};

/** The key of a setting. */
export type SettingKey = keyof typeof SETTINGS;

/** Validated configuration: each setting's validated value, typed by its validator. */
export type Config = {
  -readonly [K in SettingKey]: Zod.output<ReturnType<(typeof SETTINGS)[K]['schema']>>;
};

/**
 * Variables read from the environment alone (they tune the process, not a request), declared here
 * so the README lists them with the settings. Read through `env.ts`.
 */
export const ENVIRONMENT_ONLY: readonly { env: string; defaultText: string; help: string }[] = [
  {
    env: 'SQLRECALL_TZ',
    defaultText: "the process's time zone",
    help: 'time zone of `memory add --until` days',
  },
  {
    env: 'SQLRECALL_MEMORY_POOL_SIZE',
    defaultText: '`4`',
    help: 'connections per process to a server memory database (1–200)',
  },
  {
    env: 'SQLRECALL_WASM_TIER',
    defaultText: 'per command',
    help: '`baseline` or `optimizing`: the WebAssembly compiler tier of embedded PostgreSQL',
  },
  {
    env: 'SQLRECALL_PGLITE_TEMPLATE',
    defaultText: 'on',
    help: '`off`: create new embedded stores with initdb instead of copying the shipped cluster',
  },
  {
    env: 'SQLRECALL_DEBUG',
    defaultText: 'unset',
    help: 'any value: print the stack of an unexpected error',
  },
  {
    env: 'NO_COLOR / FORCE_COLOR',
    defaultText: 'colours on a terminal',
    help: 'turn terminal colours off / on',
  },
];

/**
 * The OS user name, or `local` where the process has none (containers without a passwd entry) or
 * where it is no valid user name (a space in it): the default must never make a command fail.
 */
function osUserName(): string {
  try {
    const name = userInfo().username;
    return USER_NAME_PATTERN.test(name) ? name : 'local';
  } catch {
    return 'local';
  }
}

/** A flag's option name without its value placeholder: `--db <url>` → `--db`. */
export function flagName(flag: string): string {
  return flag.split(' ')[0]!;
}

/**
 * The attribute commander stores a flag's value under: `--timeout-ms <ms>` → `timeoutMs`,
 * `--no-memory` → `memory`.
 */
export function flagAttribute(flag: string): string {
  return flagName(flag)
    .replace(/^--(no-)?/, '')
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** `-a-b` → `-aB`, as commander names a flag's attribute (type level). */
type Camel<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;
/** The attribute of a flag string (type level, like {@link flagAttribute}). */
type FlagAttribute<F> = F extends `--no-${infer N}`
  ? Camel<N>
  : F extends `--${infer N} <${string}>`
    ? Camel<N>
    : F extends `--${infer N}`
      ? Camel<N>
      : never;
/** The parsed value of a flag: a string, or a boolean for a flag without a value. */
type FlagValue<F> = F extends `${string} <${string}>` ? string : boolean;
type FlagOf<K extends SettingKey> = (typeof SETTINGS)[K] extends { readonly flag?: infer F } ? F : never;

/**
 * The global options as commander parses them, one per flagged setting (string values; booleans for
 * flags without a value), plus `--json`.
 */
export type GlobalOptions = {
  [K in SettingKey as FlagAttribute<FlagOf<K>>]?: FlagValue<FlagOf<K>>;
} & {
  /** `--json`: one JSON document on stdout. */
  json?: boolean;
};
