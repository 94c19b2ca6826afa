/**
 * Helpers of the memory logic tests: a hand-made catalog of the small shop, and a scripted model
 * whose replies are programmed per memory purpose (classification, extraction, reconciliation)
 * and per SQL prompt content.
 */
import type { Memory } from '../../src/core/memory.js';
import type { Column, Schema, Table } from '../../src/core/schema.js';

function column(name: string, type: string, position: number): Column {
  return {
    name,
    position,
    type,
    domainBaseType: null,
    enumValues: null,
    nullable: true,
    default: null,
    comment: null,
  };
}

function table(name: string, columns: [string, string][]): Table {
  return {
    schema: 'public',
    name,
    kind: 'table',
    comment: null,
    estimatedRows: null,
    columns: columns.map(([n, t], i) => column(n, t, i + 1)),
    primaryKey: ['id'],
    foreignKeys: [],
    uniqueIndexes: [],
  };
}

/** The catalog of `SHOP_SQL` (test/support/fixtures.ts): customers, orders, t. */
export function shopSchema(): Schema {
  return {
    dialect: 'postgres',
    database: 'shop',
    serverVersion: '18.0',
    schemas: ['public'],
    tables: [
      table('customers', [
        ['id', 'integer'],
        ['name', 'text'],
        ['country', 'text'],
      ]),
      table('orders', [
        ['id', 'integer'],
        ['customer_id', 'integer'],
        ['status', 'text'],
        ['total_amount', 'numeric(12,2)'],
      ]),
      table('t', [
        ['id', 'integer'],
        ['v', 'text'],
      ]),
    ],
  };
}

/** An extraction reply with the given facts. */
export function factsReply(
  ...facts: { kind: string; text: string; sql?: string | null; columns?: string[] }[]
): string {
  return JSON.stringify({ facts: facts.map((f) => ({ sql: null, columns: [], ...f })) });
}

/** The user's message inside an extraction/classification prompt (between <message> tags). */
export function messageOf(prompt: string): string {
  return /<message>\n([\s\S]*?)\n<\/message>/.exec(prompt)?.[1] ?? '';
}

/**
 * A stored memory built by hand for logic tests: active, unpinned, never expiring, made on
 * 2026-01-01, with the given fields over those defaults (`contentHash` defaults to the id).
 */
export function memoryFixture(fields: Pick<Memory, 'id' | 'kind' | 'text'> & Partial<Memory>): Memory {
  return {
    scope: { user: 'u' },
    sql: null,
    tables: [],
    columns: [],
    embeddingModel: 'none',
    contentHash: fields.id,
    status: 'active',
    supersedes: null,
    sourceMessageId: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    expiresAt: null,
    ...fields,
  };
}
