/**
 * All settings of sqlrecall, validated with zod. This module is the only reader of `process.env`
 * and `.env`. Precedence: command-line flags > environment > `.env` in the working directory >
 * defaults.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { SqlrecallError } from '../core/errors.js';
import { DEFAULT_MEMORY_TOP_K } from '../core/memory.js';
import { DEFAULT_OLLAMA_HOST } from '../core/model-names.js';
import { maskUrl } from '../core/redact.js';
import { parseThresholdTable } from '../memory/thresholds.js';

/** Validated configuration. */
export interface Config {
  /** The database to question: `postgres://…`, `postgresql://…` or `pglite:DIR`. Undefined until set. */
  databaseUrl: string | undefined;
  /** Memory store; undefined → embedded PGlite under `home`. */
  memoryDatabaseUrl: string | undefined;
  /** Ollama base URL. Default `http://127.0.0.1:11434`. */
  ollamaHost: string;
  /** Chat model. Default `qwen2.5-coder:7b`. */
  model: string;
  /** Embedding model. Default `all-minilm` (384 dimensions). */
  embedModel: string;
  /** The user whose memories apply. Default: the OS user name. */
  user: string;
  /** Data folder (demo database, embedded memory store). Default `~/.sqlrecall`. */
  home: string;
  /** Row cap per statement. Default 1000. */
  maxRows: number;
  /** Statement timeout in milliseconds. Default 30000 (30 s). */
  statementTimeoutMs: number;
  /**
   * Byte budget of one result (UTF-8 text of its values), enforced while rows stream from the
   * cursor. Default 64 MiB.
   */
  maxResultBytes: number;
  /** Schemas to introspect; empty → every non-system schema. */
  schemas: string[];
  /** Fixed model context (`num_ctx`); undefined → sized to each prompt. */
  numCtx: number | undefined;
  /** Most repair attempts after a database error. Default 2. */
  maxRepairs: number;
  /**
   * HTTP API: most `POST /api/sql` and `POST /api/ask` requests one user may have running at once;
   * one more is answered 429. Default 4.
   */
  maxRequestsPerUser: number;
  /**
   * Worker threads that parse and check long statements off the server's main thread
   * (`sql/check-pool.ts`); 0: on the main thread. Undefined (default): one per CPU but one, 1–4.
   */
  checkThreads: number | undefined;
  /** Log level for stderr logs. Default `warn`. */
  logLevel: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  /**
   * Allowlist mode: the only relations queries may read, as `schema.table`, `schema.*` or `table`
   * (comma-separated in the flag/variable). Empty (default) → no allowlist.
   */
  allowTables: string[];
  /**
   * Functions outside `pg_catalog` allowed without the function policy's checks,
   * as `schema.name` or `name` patterns (`*` wildcard), comma-separated in
   * `--allow-functions` / `SQLRECALL_ALLOW_FUNCTIONS`. Empty (default) → every such function must
   * be IMMUTABLE or STABLE, not SECURITY DEFINER, and from no denied extension.
   */
  allowFunctions: string[];
  /** The user's team: its shared memories apply too (`--team`). Default none. */
  team: string | undefined;
  /** Long-term memory on (default) or off for every user of this process (`--no-memory`). */
  memoryEnabled: boolean;
  /** Most facts learned from one message. Default 2. */
  memoryMaxFacts: number;
  /** Similarity recall of terms/metrics/entities: top-k (default 5) … */
  memoryTopK: number;
  /** … and least similarity, 1 − cosine distance (default 0.3). */
  memoryMinSimilarity: number;
  /**
   * Reconciliation thresholds per embedding model, `model=low:high` comma-separated (`*` for any
   * other model). Empty → 0.70:0.95 for every model.
   */
  memoryThresholds: string;
  /**
   * Least embedding similarity (1 − cosine distance) of a saved example shown to the model
   * (few-shot). Default 0.6 (see `DEFAULT_MIN_EMBEDDING_SIMILARITY`, src/agent/example-similarity.ts).
   */
  exampleMinSimilarity: number;
  /**
   * Least word similarity (Dice of content words, 0–1) of a saved example when no embedding model
   * answers. Default 0.4, measured by bench/examples-fallback.ts (see `DEFAULT_MIN_WORD_SIMILARITY`).
   */
  exampleMinWordSimilarity: number;
  /** Most saved examples in the SQL prompt (few-shot); 0 turns few-shot off. Default 3. */
  fewShotMax: number;
  /**
   * Milliseconds a chat call may wait for its first token before failing with `model_timeout`
   * (then the question is answered from examples and rules if one fits). Default 300,000; 0: none.
   */
  modelTimeoutMs: number;
  /**
   * Milliseconds a chat reply that started streaming may stay silent (no content or reasoning
   * token) before failing with `model_timeout`: a hung model. Default 120,000; 0: none.
   */
  modelIdleTimeoutMs: number;
  /**
   * Seconds a one-shot command (`ask`, `sql`) leaves the embedded stores it had to start open in a
   * background `sqlrecall hold` process, so the next command reaches them through its socket instead
   * of starting PGlite again (≈ 0.5 s and ≈ 1 s of CPU per start). The holder exits after
   * this many seconds with no client. Default 0: off (nothing outlives the command).
   */
  keepWarmSeconds: number;
  /**
   * Most tokens of the model's SQL reply (`num_predict`). Default 1024. A reply cut at this limit is
   * retried once with four times as many (at most 8192), then fails naming this setting.
   */
  maxSqlTokens: number;
  /**
   * Model backend: `ollama` (default, Ollama's own API at `ollamaHost`) or `openai`
   * (any OpenAI-compatible server at `baseUrl`: llama.cpp, LM Studio, vLLM, LocalAI, Jan, Ollama `/v1`).
   */
  provider: 'ollama' | 'openai';
  /** Base URL of the OpenAI-compatible server, with `/v1`. Default `http://127.0.0.1:8080/v1` (llama-server). */
  baseUrl: string;
  /** Bearer token for OpenAI-compatible servers that want one (SQLRECALL_API_KEY only). Never printed. */
  apiKey: string | undefined;
  /** Context length of the chat model when the OpenAI-compatible server does not report one. */
  contextLength: number | undefined;
}

/** One setting: its environment variable, its flag, and its validator (whose output is the value). */
interface Setting<T = unknown> {
  env: string;
  flag: string;
  schema: z.ZodType<T>;
  describe: string;
}

const int = (min: number, max: number) =>
  z.coerce
    .number({ error: `expected a whole number between ${min} and ${max}` })
    .int({ error: `expected a whole number between ${min} and ${max}` })
    .min(min, { error: `expected a whole number between ${min} and ${max}` })
    .max(max, { error: `expected a whole number between ${min} and ${max}` });

const dbUrl = z
  .string()
  .trim()
  .refine((v) => /^(postgres|postgresql):\/\/|^pglite:/i.test(v), {
    error: 'expected a URL starting with postgres://, postgresql:// or pglite:',
  })
  .refine((v) => !/^postgres(ql)?:/i.test(v) || URL.canParse(v), { error: 'expected a valid URL' });

const httpUrl = z
  .string()
  .trim()
  .transform((v) => (/^https?:\/\//i.test(v) ? v : `http://${v}`))
  .refine((v) => URL.canParse(v), { error: 'expected an http:// or https:// URL' })
  .transform((v) => v.replace(/\/+$/, ''));

const name = z.string().trim().min(1, { error: 'must not be empty' });

/** A comma-separated list (entries trimmed, empty ones dropped) whose every entry matches `entry`. */
const commaList = (entry: RegExp, error: string) =>
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((list) => list.every((item) => entry.test(item)), { error });

/** The settings table: environment variable, flag and validation for each key of {@link Config}. */
export const SETTINGS: { readonly [K in keyof Config]: Setting<Config[K]> } = {
  databaseUrl: {
    env: 'DATABASE_URL',
    flag: '--db',
    schema: dbUrl.optional(),
    describe: 'database to question',
  },
  memoryDatabaseUrl: {
    env: 'MEMORY_DATABASE_URL',
    flag: '--memory-db',
    schema: dbUrl.optional(),
    describe: 'memory store (empty: embedded)',
  },
  ollamaHost: { env: 'OLLAMA_HOST', flag: '--ollama-host', schema: httpUrl, describe: 'Ollama server' },
  model: { env: 'SQLRECALL_MODEL', flag: '--model', schema: name, describe: 'chat model' },
  embedModel: {
    env: 'SQLRECALL_EMBED_MODEL',
    flag: '--embed-model',
    schema: name,
    describe: 'embedding model',
  },
  user: {
    env: 'SQLRECALL_USER',
    flag: '--user',
    schema: z.string().min(1, { error: 'must not be empty' }),
    describe: 'user id',
  },
  home: { env: 'SQLRECALL_HOME', flag: '--home', schema: name, describe: 'data folder' },
  maxRows: { env: 'SQLRECALL_MAX_ROWS', flag: '--max-rows', schema: int(1, 1_000_000), describe: 'row cap' },
  maxResultBytes: {
    env: 'SQLRECALL_MAX_RESULT_BYTES',
    flag: '--max-result-bytes',
    schema: int(1024, 1024 ** 4),
    describe: 'result byte budget',
  },
  statementTimeoutMs: {
    env: 'SQLRECALL_STATEMENT_TIMEOUT_MS',
    flag: '--timeout-ms',
    schema: int(100, 86_400_000),
    describe: 'statement timeout (ms)',
  },
  maxRequestsPerUser: {
    env: 'SQLRECALL_MAX_REQUESTS_PER_USER',
    flag: '--max-requests-per-user',
    schema: int(1, 1000),
    describe: 'requests one user may run at once (HTTP API)',
  },
  checkThreads: {
    env: 'SQLRECALL_CHECK_THREADS',
    flag: '--check-threads',
    schema: int(0, 64).optional(),
    describe: 'threads that check long statements (0: main thread)',
  },
  schemas: {
    env: 'SQLRECALL_SCHEMAS',
    flag: '--schemas',
    schema: z.string().transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    describe: 'schemas to read (comma-separated)',
  },
  numCtx: {
    env: 'SQLRECALL_NUM_CTX',
    flag: '--num-ctx',
    schema: int(512, 1_048_576).optional(),
    describe: 'model context',
  },
  maxRepairs: {
    env: 'SQLRECALL_MAX_REPAIRS',
    flag: '--max-repairs',
    schema: int(0, 10),
    describe: 'repair attempts',
  },
  logLevel: {
    env: 'SQLRECALL_LOG_LEVEL',
    flag: '--log-level',
    schema: z.enum(['silent', 'error', 'warn', 'info', 'debug']),
    describe: 'log level',
  },
  allowTables: {
    env: 'SQLRECALL_ALLOW_TABLES',
    flag: '--allow-tables',
    schema: commaList(
      /^("[^"]+"|[^".\s]+)(\.("[^"]+"|[^".\s]+))?$/,
      'expected schema.table, schema.* or table names, comma-separated',
    ),
    describe: 'allowed tables (comma-separated schema.table or schema.*)',
  },
  allowFunctions: {
    env: 'SQLRECALL_ALLOW_FUNCTIONS',
    flag: '--allow-functions',
    schema: commaList(
      /^[^\s.,]+(\.[^\s.,]+)?$/,
      'expected schema.function or function names, comma-separated',
    ),
    describe: 'functions allowed without the function policy (comma-separated schema.name or name)',
  },
  team: {
    env: 'SQLRECALL_TEAM',
    flag: '--team',
    schema: z.string().min(1, { error: 'must not be empty' }).optional(),
    describe: 'team whose shared memories apply',
  },
  memoryEnabled: {
    env: 'SQLRECALL_MEMORY',
    flag: '--no-memory',
    schema: z
      .enum(['on', 'off', 'true', 'false', '1', '0', 'yes', 'no'], { error: 'expected on or off' })
      .transform((v) => ['on', 'true', '1', 'yes'].includes(v)),
    describe: 'long-term memory on or off',
  },
  memoryMaxFacts: {
    env: 'SQLRECALL_MEMORY_MAX_FACTS',
    flag: '--memory-max-facts',
    schema: int(1, 10),
    describe: 'most facts learned per message',
  },
  memoryTopK: {
    env: 'SQLRECALL_MEMORY_TOP_K',
    flag: '--memory-top-k',
    schema: int(1, 50),
    describe: 'memories recalled by similarity',
  },
  memoryMinSimilarity: {
    env: 'SQLRECALL_MEMORY_MIN_SIMILARITY',
    flag: '--memory-min-similarity',
    schema: z.coerce
      .number({ error: 'expected a number between -1 and 1' })
      .min(-1, { error: 'expected a number between -1 and 1' })
      .max(1, { error: 'expected a number between -1 and 1' }),
    describe: 'least similarity of recalled memories',
  },
  memoryThresholds: {
    env: 'SQLRECALL_MEMORY_THRESHOLDS',
    flag: '--memory-thresholds',
    schema: z.string().refine((v) => parseThresholdTable(v) !== undefined, {
      error: 'expected model=low:high pairs, e.g. all-minilm=0.70:0.95',
    }),
    describe: 'reconciliation thresholds per embedding model',
  },
  exampleMinSimilarity: {
    env: 'SQLRECALL_EXAMPLE_MIN_SIMILARITY',
    flag: '--example-min-similarity',
    schema: z.coerce
      .number({ error: 'expected a number between -1 and 1' })
      .min(-1, { error: 'expected a number between -1 and 1' })
      .max(1, { error: 'expected a number between -1 and 1' }),
    describe: 'least embedding similarity of a saved example shown to the model',
  },
  exampleMinWordSimilarity: {
    env: 'SQLRECALL_EXAMPLE_MIN_WORD_SIMILARITY',
    flag: '--example-min-word-similarity',
    schema: z.coerce
      .number({ error: 'expected a number between 0 and 1' })
      .min(0, { error: 'expected a number between 0 and 1' })
      .max(1, { error: 'expected a number between 0 and 1' }),
    describe: 'least word similarity of a saved example (no embedding model)',
  },
  fewShotMax: {
    env: 'SQLRECALL_FEW_SHOT_MAX',
    flag: '--few-shot-max',
    schema: int(0, 10),
    describe: 'most saved examples in the SQL prompt (0: off)',
  },
  modelTimeoutMs: {
    env: 'SQLRECALL_MODEL_TIMEOUT_MS',
    flag: '--model-timeout-ms',
    schema: int(0, 86_400_000),
    describe: 'first-token deadline of a chat call in ms (0: none)',
  },
  modelIdleTimeoutMs: {
    env: 'SQLRECALL_MODEL_IDLE_TIMEOUT_MS',
    flag: '--model-idle-timeout-ms',
    schema: int(0, 86_400_000),
    describe: 'longest silence of a streaming chat reply in ms (0: none)',
  },
  keepWarmSeconds: {
    env: 'SQLRECALL_KEEP_WARM',
    flag: '--keep-warm',
    schema: int(0, 86_400),
    describe: 'seconds a background holder keeps the embedded stores open after ask or sql (0: off)',
  },
  maxSqlTokens: {
    env: 'SQLRECALL_MAX_SQL_TOKENS',
    flag: '--max-sql-tokens',
    schema: int(64, 32_768),
    describe: 'most tokens of the SQL reply',
  },
  // OpenAI-compatible backend
  provider: {
    env: 'SQLRECALL_PROVIDER',
    flag: '--provider',
    schema: z.enum(['ollama', 'openai'], { error: 'expected ollama or openai' }),
    describe: 'model backend',
  },
  baseUrl: {
    env: 'SQLRECALL_BASE_URL',
    flag: '--base-url',
    schema: httpUrl,
    describe: 'OpenAI-compatible server',
  },
  apiKey: {
    env: 'SQLRECALL_API_KEY',
    flag: '--api-key',
    schema: z.string().trim().optional(),
    describe: 'API key of the OpenAI-compatible server',
  },
  contextLength: {
    env: 'SQLRECALL_CONTEXT_LENGTH',
    flag: '--context-length',
    schema: int(512, 10_485_760).optional(),
    describe: 'chat model context length',
  },
};

function defaults(): Record<keyof Config, unknown> {
  let user = 'local';
  try {
    user = userInfo().username || user;
  } catch {
    // Some containers have no passwd entry for the uid; keep the fallback.
  }
  return {
    databaseUrl: undefined,
    memoryDatabaseUrl: undefined,
    ollamaHost: DEFAULT_OLLAMA_HOST,
    model: 'qwen2.5-coder:7b',
    embedModel: 'all-minilm',
    user,
    home: join(homedir(), '.sqlrecall'),
    maxRows: 1000,
    maxResultBytes: 64 * 1024 * 1024,
    statementTimeoutMs: 30_000,
    maxRequestsPerUser: 4,
    checkThreads: undefined,
    schemas: '',
    numCtx: undefined,
    maxRepairs: 2,
    logLevel: 'warn',
    allowTables: '',
    allowFunctions: '',
    team: undefined,
    memoryEnabled: 'on',
    memoryMaxFacts: 2,
    memoryTopK: DEFAULT_MEMORY_TOP_K,
    memoryMinSimilarity: 0.3,
    memoryThresholds: '',
    exampleMinSimilarity: 0.6,
    exampleMinWordSimilarity: 0.4,
    fewShotMax: 3,
    modelTimeoutMs: 300_000,
    modelIdleTimeoutMs: 120_000,
    keepWarmSeconds: 0,
    maxSqlTokens: 1024,
    provider: 'ollama',
    baseUrl: 'http://127.0.0.1:8080/v1',
    apiKey: undefined,
    contextLength: undefined,
  };
}

/** Inputs to {@link loadConfig}. */
export interface ConfigSources {
  /** Values given as flags, keyed like {@link Config}; undefined entries are ignored. */
  flags?: Partial<Record<keyof Config, string | number | undefined>>;
  /** Environment; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Folder whose `.env` is read; default `process.cwd()`. */
  cwd?: string;
}

/**
 * Reads and validates the configuration.
 * @throws SqlrecallError `config` with one sentence naming the setting (flag or variable) and the
 *   problem; URL values in the message are masked.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const dotenv = readDotEnv(resolve(sources.cwd ?? process.cwd(), '.env'));
  const base = defaults();
  const out: Partial<Config> = {};
  for (const key of Object.keys(SETTINGS) as (keyof Config)[]) {
    const setting = SETTINGS[key];
    const flagValue = sources.flags?.[key];
    let raw: unknown;
    let origin: string;
    if (flagValue !== undefined) {
      raw = String(flagValue);
      origin = `${setting.flag}`;
    } else if (env[setting.env] !== undefined && env[setting.env] !== '') {
      raw = env[setting.env];
      origin = setting.env;
    } else if (dotenv[setting.env] !== undefined && dotenv[setting.env] !== '') {
      raw = dotenv[setting.env];
      origin = `${setting.env} (from .env)`;
    } else {
      raw = base[key];
      origin = `${setting.env} (default)`;
    }
    const parsed = setting.schema.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues[0]?.message ?? 'invalid value';
      const shown = typeof raw === 'string' ? ` (got "${maskUrl(raw).slice(0, 120)}")` : '';
      throw new SqlrecallError('config', `Setting ${origin} is invalid: ${why}${shown}.`, {
        details: { setting: setting.env },
      });
    }
    assign(out, key, parsed.data);
  }
  out.home = resolve(String(out.home).replace(/^~(?=$|\/)/, homedir()));
  // Complete: the loop above set every key of SETTINGS, which has exactly the keys of Config.
  return out as Config;
}

/** `out[key] = value`, typed per key. */
function assign<K extends keyof Config>(out: Partial<Config>, key: K, value: Config[K]): void {
  out[key] = value;
}

function readDotEnv(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  try {
    return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch (cause) {
    throw new SqlrecallError('config', `The file ${path} could not be read as KEY=value lines.`, { cause });
  }
}
