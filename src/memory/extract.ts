/**
 * Extraction: the facts a user wants remembered, from the user's own message
 * only — never from the assistant's text, SQL, column lists or result rows. At most `maxFacts`
 * facts (default 2), none allowed; each with a kind, the user's wording, and, where possible, a SQL
 * fragment checked against the schema (dropped, with a note, when it does not check out). A fact
 * that cannot be read is never dropped silently: it is reported in `problems`.
 */
import { z } from 'zod';
import type { MemoryKind } from '../core/memory.js';
import type { ChatModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { renderSchema } from '../sql/render.js';
import { callJson } from './json-call.js';
import { buildExtractMessages, MEMORY_PURPOSES } from './prompts.js';
import { checkFragment } from './sql-fragment.js';
import { clip, stem } from './text.js';

/** Default of the most facts kept from one message. */
export const DEFAULT_MAX_FACTS = 2;

/** Kinds extraction may produce. */
export const EXTRACTED_KINDS = ['preference', 'term', 'metric', 'entity'] as const;

/** One fact ready for reconciliation. */
export interface ExtractedFact {
  kind: MemoryKind;
  /** The user's wording. */
  text: string;
  /** Checked SQL fragment, or null. */
  sql: string | null;
  /** Tables touched, as `schema.table`. */
  tables: string[];
  /** Columns touched, as `schema.table.column`. */
  columns: string[];
  /** Why the model's SQL was dropped, if it was. */
  sqlNote?: string;
}

/** Result of {@link extractFacts}. */
export interface Extraction {
  facts: ExtractedFact[];
  /** Sentences for the user about facts that could not be read or were left out. */
  problems: string[];
}

const factSchema = z.object({
  kind: z.enum(EXTRACTED_KINDS),
  text: z.string().trim().min(1).max(500),
  sql: z.string().nullable().optional(),
  columns: z.array(z.string()).optional(),
});

/** The schema sent as Ollama `format` (strict) … */
const formatSchema = z.object({ facts: z.array(factSchema) });
/** … and the envelope validated (loose, so one bad fact does not hide the good ones). */
const envelopeSchema = z.object({ facts: z.array(z.unknown()) });

/** Options of {@link extractFacts}. */
export interface ExtractOptions {
  chat: ChatModel;
  /** Introspected schema for the prompt and for checking SQL; without it only the parse is checked. */
  schema?: Schema;
  /** Most facts kept (default {@link DEFAULT_MAX_FACTS}). */
  maxFacts?: number;
  signal?: AbortSignal;
  /** Where unreadable replies are logged (default: nowhere; problems are returned either way). */
  log?: (message: string, details: Record<string, unknown>) => void;
}

/**
 * Extracts the facts of `message` (the user's words only).
 * @throws SqlrecallError `model_*` when the model server fails (the caller keeps the pending write).
 */
export async function extractFacts(message: string, options: ExtractOptions): Promise<Extraction> {
  const maxFacts = Math.max(1, options.maxFacts ?? DEFAULT_MAX_FACTS);
  const schemaText = options.schema ? renderSchema(options.schema, { includeComments: false }) : '';
  const reply = await callJson(
    options.chat,
    buildExtractMessages({ message, schemaText, maxFacts }),
    envelopeSchema,
    { purpose: MEMORY_PURPOSES.extract, maxTokens: 600, signal: options.signal, format: formatSchema },
  );
  const problems: string[] = [];
  if (!reply.ok) {
    options.log?.('memory extraction reply unreadable', { error: reply.error, reply: clip(reply.raw, 500) });
    problems.push(
      `I could not read what to remember from "${clip(message, 120)}" (the model's reply was not valid JSON); nothing was stored from it.`,
    );
    return { facts: [], problems };
  }
  const facts: ExtractedFact[] = [];
  for (const raw of reply.value.facts) {
    const parsed = factSchema.safeParse(raw);
    if (!parsed.success) {
      options.log?.('memory fact unreadable', { fact: clip(JSON.stringify(raw) ?? '', 300) });
      problems.push(`One fact could not be read and was not stored: ${clip(JSON.stringify(raw) ?? '', 160)}`);
      continue;
    }
    if (facts.length >= maxFacts) {
      problems.push(
        `Only ${maxFacts} facts are kept per message; not stored: "${clip(parsed.data.text, 120)}"`,
      );
      continue;
    }
    facts.push(await checkFact(parsed.data, options.schema));
  }
  return { facts, problems };
}

/** Checks a fact's SQL and columns against the schema; SQL that does not check out is dropped. */
export async function checkFact(
  fact: { kind: MemoryKind; text: string; sql?: string | null; columns?: string[] },
  schema?: Schema,
): Promise<ExtractedFact> {
  const out: ExtractedFact = { kind: fact.kind, text: fact.text.trim(), sql: null, tables: [], columns: [] };
  const sql = fact.sql?.trim();
  if (sql && !/^null$/i.test(sql)) {
    const check = await checkFragment(sql, schema);
    if (check.ok) {
      out.sql = check.sql;
      out.tables = check.tables;
      out.columns = check.columns;
    } else {
      out.sqlNote = `SQL "${clip(sql, 120)}" dropped: ${check.reason}`;
    }
  }
  if (schema && out.columns.length === 0) {
    const named = resolveColumnNames(fact.columns ?? [], schema);
    const guessed = named.length > 0 ? named : guessColumns(fact.text, schema);
    out.columns = guessed;
  }
  if (schema && out.tables.length === 0) {
    const fromColumns = out.columns.map((c) => c.slice(0, c.lastIndexOf('.')));
    out.tables = [...new Set([...fromColumns, ...guessTables(fact.text, schema)])];
  }
  return out;
}

/** `table.column` / `schema.table.column` names that exist, as `schema.table.column`. */
function resolveColumnNames(names: string[], schema: Schema): string[] {
  const out = new Set<string>();
  for (const name of names) {
    const parts = name.split('.').map((p) => p.replace(/^"|"$/g, '').toLowerCase());
    if (parts.length < 2) continue;
    const [column, table, schemaName] = [...parts].reverse();
    const t = schema.tables.find(
      (x) =>
        x.name.toLowerCase() === table && (schemaName === undefined || x.schema.toLowerCase() === schemaName),
    );
    const c = t?.columns.find((x) => x.name.toLowerCase() === column);
    if (t && c) out.add(`${t.schema}.${t.name}.${c.name}`);
  }
  return [...out];
}

/** Tables whose name (stemmed) occurs as a word of `text`. */
export function guessTables(text: string, schema: Schema): string[] {
  const words = new Set((text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).map(stem));
  return schema.tables
    .filter((t) => words.has(stem(t.name.toLowerCase())))
    .map((t) => `${t.schema}.${t.name}`);
}

/** Columns whose name (stemmed, `_` as a space) occurs in `text`, skipping ids and names. */
export function guessColumns(text: string, schema: Schema): string[] {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).map(stem);
  const joined = ` ${words.join(' ')} `;
  const out: string[] = [];
  for (const table of schema.tables) {
    for (const column of table.columns) {
      const name = column.name.toLowerCase();
      if (name === 'id' || name === 'name' || name.endsWith('_id')) continue;
      const key = name.split('_').map(stem).join(' ');
      if (joined.includes(` ${key} `)) out.push(`${table.schema}.${table.name}.${column.name}`);
    }
  }
  return out;
}
