import { describe, expect, it } from 'vitest';
import { shopSchema } from '../../test/support/memory-fixtures.js';
import { checkFragment, predicateIn, predicateParts, statementParts } from './sql-fragment.js';

const schema = shopSchema();

describe('checkFragment', () => {
  it('accepts predicates on existing columns and reports their tables and columns', async () => {
    expect(await checkFragment("customers.country = 'India'", schema)).toEqual({
      ok: true,
      sql: "customers.country = 'India'",
      tables: ['public.customers'],
      columns: ['public.customers.country'],
    });
    expect(await checkFragment('orders.total_amount > 10000;', schema)).toMatchObject({
      ok: true,
      sql: 'orders.total_amount > 10000',
      columns: ['public.orders.total_amount'],
    });
    // An unqualified column resolves to the table that has it.
    expect(await checkFragment("status IN ('delivered', 'shipped')", schema)).toMatchObject({
      ok: true,
      tables: ['public.orders'],
    });
    // A subquery on known tables is fine.
    expect(
      await checkFragment(
        'customers.id IN (SELECT o.customer_id FROM orders o WHERE o.total_amount > 100)',
        schema,
      ),
    ).toMatchObject({ ok: true });
  });

  it.each([
    ["customers.nationality = 'India'", /nationality does not exist/],
    ['invoices.total > 1', /invoices\.total does not exist/],
    ['orders.total_amount >', /not a valid read-only condition/],
    ['', /empty/],
    ['true) UNION SELECT password FROM users WHERE (true', /not a single condition|not a valid/],
    ['1 = 1); DROP TABLE customers; --', /not a valid read-only condition/],
    ['pg_sleep(10) IS NULL', /not a valid read-only condition/],
    ['customers.* IS NOT NULL', /\*/],
    ['x'.repeat(2000), /too long/],
  ])('refuses %s', async (fragment, reason) => {
    const check = await checkFragment(fragment, schema);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });

  it('without a schema checks the parse only and takes tables from qualified names', async () => {
    expect(await checkFragment("customers.country = 'India'")).toMatchObject({
      ok: true,
      tables: ['public.customers'],
    });
    expect((await checkFragment('country = ')).ok).toBe(false);
  });
});

describe('predicate presence', () => {
  const present = async (fragment: string, sql: string) =>
    predicateIn((await predicateParts(fragment))!, (await statementParts(sql))!);

  it('finds a predicate whatever the alias, casts, order and formatting', async () => {
    expect(
      await present(
        "customers.country = 'India'",
        "SELECT c.name FROM customers c WHERE c.country = 'India'::text",
      ),
    ).toBe(true);
    expect(
      await present(
        'orders.total_amount > 10000',
        'SELECT * FROM customers JOIN orders o ON o.customer_id = customers.id AND 10000 < o.total_amount',
      ),
    ).toBe(true);
    expect(
      await present('orders.total_amount > 10000', 'SELECT * FROM orders WHERE total_amount > 10000.0'),
    ).toBe(true);
  });

  it('misses a predicate whose literal or column differs, or that only appears in the select list', async () => {
    expect(
      await present("customers.country = 'India'", "SELECT * FROM customers WHERE country = 'China'"),
    ).toBe(false);
    expect(await present("customers.country = 'India'", "SELECT * FROM customers WHERE city = 'India'")).toBe(
      false,
    );
    expect(
      await present("customers.country = 'India'", "SELECT country = 'India' AS is_india FROM customers"),
    ).toBe(false);
  });

  it('compares operators: a negated or different comparison does not apply the predicate', async () => {
    const only = "orders.status = 'delivered'";
    expect(await present(only, "SELECT count(*) FROM orders WHERE status <> 'delivered'")).toBe(false);
    expect(await present(only, "SELECT count(*) FROM orders WHERE status != 'delivered'")).toBe(false);
    expect(await present(only, "SELECT count(*) FROM orders WHERE NOT (status = 'delivered')")).toBe(false);
    expect(await present(only, "SELECT count(*) FROM orders WHERE status NOT IN ('delivered')")).toBe(false);
    expect(await present(only, "SELECT count(*) FROM orders WHERE status LIKE 'delivered'")).toBe(false);
    expect(await present(only, "SELECT count(*) FROM orders WHERE status = 'delivered' OR true")).toBe(false);
    expect(
      await present('orders.total_amount > 10000', 'SELECT * FROM orders WHERE total_amount < 10000'),
    ).toBe(false);
    expect(
      await present('orders.total_amount > 10000', 'SELECT * FROM orders WHERE total_amount >= 10000'),
    ).toBe(false);
    expect(
      await present('orders.total_amount > 10000', 'SELECT * FROM orders WHERE 10000 > total_amount'),
    ).toBe(false);
  });

  it('still finds the same comparison when written another way', async () => {
    const only = "orders.status = 'delivered'";
    expect(await present(only, "SELECT * FROM orders WHERE 'delivered' = status AND id > 3")).toBe(true);
    expect(await present(only, "SELECT * FROM orders WHERE status IN ('delivered')")).toBe(true);
    expect(
      await present(
        only,
        "SELECT * FROM orders o WHERE o.id > 0 AND (o.status = 'delivered'::text AND true)",
      ),
    ).toBe(true);
    expect(
      await present(only, "SELECT * FROM c WHERE id IN (SELECT cid FROM orders WHERE status = 'delivered')"),
    ).toBe(true);
    expect(
      await present(
        "customers.country IN ('Peru', 'Chile')",
        "SELECT * FROM customers WHERE country IN ('Chile', 'Peru')",
      ),
    ).toBe(true);
    expect(
      await present(
        "customers.country IN ('Peru', 'Chile')",
        "SELECT * FROM customers WHERE country NOT IN ('Chile', 'Peru')",
      ),
    ).toBe(false);
    expect(
      await present('orders.shipped_at IS NOT NULL', 'SELECT * FROM orders WHERE shipped_at IS NULL'),
    ).toBe(false);
    expect(
      await present('orders.shipped_at IS NOT NULL', 'SELECT * FROM orders WHERE shipped_at IS NOT NULL'),
    ).toBe(true);
    expect(
      await present('orders.total BETWEEN 1 AND 5', 'SELECT * FROM orders WHERE total NOT BETWEEN 1 AND 5'),
    ).toBe(false);
    // A predicate that is itself an OR is checked by its columns and constants only.
    expect(
      await present(
        "customers.country = 'Peru' OR customers.country = 'Chile'",
        "SELECT * FROM customers WHERE country = 'Chile' OR country = 'Peru'",
      ),
    ).toBe(true);
  });

  it('statementParts lists the tables read', async () => {
    expect(
      (await statementParts('SELECT 1 FROM public.orders o JOIN customers c ON true'))?.tables.sort(),
    ).toEqual(['customers', 'orders']);
    expect(await statementParts('SELEC nonsense')).toBeUndefined();
  });
});
