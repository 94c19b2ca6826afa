import { describe, expect, it } from 'vitest';
import type { Memory } from '../core/memory.js';
import { findForgetTarget } from './forget.js';

const memory = (id: string, text: string, sql: string | null = null): Memory => ({
  id,
  scope: { user: 'u' },
  kind: 'preference',
  text,
  sql,
  tables: [],
  columns: [],
  embeddingModel: 'm',
  contentHash: id,
  status: 'active',
  supersedes: null,
  sourceMessageId: null,
  createdAt: '',
  updatedAt: '',
  expiresAt: null,
});

describe('findForgetTarget', () => {
  const india = memory(
    '3f2a9c1b-0000-4000-8000-000000000001',
    'Always show me customers from India',
    "customers.country = 'India'",
  );
  const delivered = memory(
    '3f2a0000-0000-4000-8000-000000000002',
    'only delivered orders',
    "orders.status = 'delivered'",
  );
  const high = memory(
    '7777aaaa-0000-4000-8000-000000000003',
    'High value order means total amount over 10000',
  );
  const all = [india, delivered, high];

  it('finds by words, ignoring generic ones like "filter"', () => {
    expect(findForgetTarget(all, 'the India filter').deleted?.id).toBe(india.id);
    expect(findForgetTarget(all, 'high value orders').deleted?.id).toBe(high.id);
  });

  it('finds by id or unique prefix; an ambiguous prefix designates nothing', () => {
    expect(findForgetTarget(all, '7777').deleted?.id).toBe(high.id);
    expect(findForgetTarget(all, india.id).deleted?.id).toBe(india.id);
    expect(findForgetTarget(all, '3f2')).toMatchObject({ deleted: null }); // too short to be an id
    const ambiguous = findForgetTarget(all, '3f2a');
    expect(ambiguous).toEqual({ deleted: null, candidates: [india, delivered] });
  });

  it('a tie or a miss deletes nothing and offers candidates', () => {
    expect(findForgetTarget(all, 'orders')).toMatchObject({ deleted: null, candidates: [delivered, high] });
    expect(findForgetTarget(all, 'the weather').deleted).toBeNull();
  });
});
