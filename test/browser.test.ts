/**
 * The web UI in Debian's Chromium (playwright-core, never a downloaded browser) against the real
 * `sqlrecall serve --users` on the demo database, with the scripted model server. FAILS (never
 * skips) when /usr/bin/chromium is absent: CI must have it (apt-get install chromium). Playwright
 * gives each launch a fresh temporary profile (its --user-data-dir). Screenshots go to
 * test-artifacts/ (gitignored). With TEST_DATABASE_URL, Stop is also checked against server
 * PostgreSQL: the cancelled statement must leave pg_stat_activity.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { UserDirectory } from '../src/app/users.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { createPgliteClient } from '../src/memory/store/index.js';
import { ARTIFACTS, launchChromium, prepareBrowserTest, startServe, stopServe } from './support/browser.js';
import { messageOf } from './support/memory-fixtures.js';
import { extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { createTempDatabase, TEST_DATABASE_URL, type TempDatabase } from './support/server-db.js';

// Code inside page.evaluate runs in the page; the tests' tsconfig has no DOM library.
// biome-ignore lint/suspicious/noExplicitAny: browser globals, used only inside page.evaluate
declare const window: any, document: any, getComputedStyle: any;

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** A question whose SQL runs long (Stop is tested on it). */
const SLOW_QUESTION = 'count every pair of numbers slowly';
/** The long statement: a cross join the guard allows, minutes of work on a busy machine. */
const SLOW_SQL =
  'SELECT count(*) AS pairs FROM generate_series(1, 40000) a CROSS JOIN generate_series(1, 40000) b';

/** A question whose model reply is slow (Stop on the embedded database, where SQL is not interruptible). */
const SLOW_MODEL_QUESTION = 'think slowly about revenue';
/** Asked while the model is missing (the scripted server answers 404): a rule answers it. */
const RULE_QUESTION = 'how many products are there?';

/** Asked for a line chart whose rows come back out of date order. */
const UNSORTED_QUESTION = 'revenue per day out of order';
/** Three days in the order March, January, February: the table keeps it, the line must not. */
const UNSORTED_SQL =
  "SELECT day, revenue FROM (VALUES ('2024-03-01'::date, 30), ('2024-01-01'::date, 10), ('2024-02-01'::date, 20)) AS v(day, revenue)";

/** Revenue per country (a bar chart). */
const COUNTRY_SQL =
  'SELECT c.country, sum(o.total_amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1 ORDER BY 2 DESC';

/** Revenue per month, for India only when the prompt carries that preference. */
function monthlySql(india: boolean): string {
  return [
    "SELECT date_trunc('month', o.order_date)::date AS month, sum(o.total_amount) AS revenue",
    'FROM orders o JOIN customers c ON c.id = o.customer_id',
    india ? "WHERE c.country = 'India'" : '',
    // The demo's orders are the two years up to yesterday (issue 11): the last six whole months.
    "AND o.order_date >= date_trunc('month', current_date) - interval '6 months'",
    "AND o.order_date < date_trunc('month', current_date)",
    'GROUP BY 1 ORDER BY 1',
  ]
    .filter(Boolean)
    .join(' ')
    .replace(/^(.*?FROM orders o JOIN customers c ON c.id = o.customer_id) AND/, '$1 WHERE');
}

/** axe-core over the whole page (WCAG 2 A/AA rules); the violations, summarised. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the app's CSP (rightly) forbids injected script tags.
  await page.evaluate(readFileSync(AXE, 'utf8'));
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (c: unknown, o: unknown) => Promise<unknown> } }).axe;
    return (await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    })) as { violations: { id: string; nodes: { target: string[]; failureSummary?: string }[] }[] };
  });
  return result.violations.flatMap((v) =>
    v.nodes.map((n) => `${v.id}: ${n.target.join(' ')} ${n.failureSummary ?? ''}`.trim()),
  );
}

/** True when the element's box lies entirely inside the viewport. */
async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
  }, selector);
}

describe('web UI in Chromium', () => {
  let home: string;
  let model: ScriptedOllama;
  let serve: ChildProcess;
  let url: string;
  let browser: Browser;
  let serverLog: () => string = () => '';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    prepareBrowserTest();
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-browser-'));
    const dbDir = join(home, 'demo-shop');
    await createDemoDatabase(dbDir);
    model = await startScriptedOllama({
      chat: (request) => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD' });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          const asked = request.lastUserMessage;
          if (asked.includes(SLOW_QUESTION)) return `\`\`\`sql\n${SLOW_SQL}\n\`\`\``;
          if (asked.includes(SLOW_MODEL_QUESTION))
            return { text: `\`\`\`sql\n${COUNTRY_SQL}\n\`\`\``, delayMs: 8_000 };
          if (/revenue by country/i.test(asked)) return `\`\`\`sql\n${COUNTRY_SQL}\n\`\`\``;
          if (asked.includes(UNSORTED_QUESTION)) return `\`\`\`sql\n${UNSORTED_SQL}\n\`\`\``;
          // The model is missing for this one: a rule answers without it (issue 19).
          if (asked.includes(RULE_QUESTION))
            return { status: 404, error: 'model "qwen2.5-coder:7b" not found' };
          return `\`\`\`sql\n${monthlySql(/customers from India/i.test(prompt))}\n\`\`\``;
        }
        return 'Revenue per month for the last six months.';
      },
    });
    const client = createPgliteClient(join(home, 'memory'));
    const users = new UserDirectory(client);
    tokens.alice = await users.add('alice');
    tokens.bob = await users.add('bob');
    tokens.carol = await users.add('carol');
    tokens.dave = await users.add('dave');
    tokens.erin = await users.add('erin');
    tokens.grace = await users.add('grace');
    tokens.heidi = await users.add('heidi');
    await client.close();
    const started = await startServe(`pglite:${dbDir}`, model.url, home);
    serve = started.child;
    url = started.url;
    serverLog = started.log;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await stopServe(serve);
    await model?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(url);
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('region', { name: 'Memory bank' }).waitFor();
  }

  it('teaches, asks, applies a chip, edits, deletes and undoes; a second user sees nothing', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const offsite: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:'))
        offsite.push(r.url());
    });
    // 1. sign in
    await signIn(page, tokens.alice!);
    const bank = page.getByRole('region', { name: 'Memory bank' });
    await bank.getByText('Nothing remembered yet.').waitFor();

    // 2. teach a preference: it appears in the memory bank
    const box = page.getByLabel('Question');
    await box.fill('Always show me customers from India');
    await box.press('Enter');
    await bank.locator('.memory-text', { hasText: 'customers from India' }).waitFor({ timeout: 15_000 });

    // 3. ask: streamed answer, SQL, table, chart, chip
    await box.fill('revenue per month');
    await box.press('Enter');
    const turn = page.locator('article.turn').nth(1);
    await expect
      .poll(() => turn.locator('.answer').textContent(), { timeout: 20_000 })
      .toBe('Revenue per month for the last six months.');
    expect(await turn.locator('details.sql code').textContent()).toContain("c.country = 'India'");
    await turn.getByRole('table', { name: 'Result' }).waitFor();
    await expect.poll(() => turn.getByRole('table', { name: 'Result' }).locator('tbody tr').count()).toBe(6);
    await turn.getByRole('img', { name: /line chart of revenue by month/ }).waitFor();
    const chip = turn.getByRole('button', { name: /Ask again without: Always show me customers from India/ });
    await chip.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-desktop-answer.png'), fullPage: false });

    // Up recalls the last question.
    await box.press('ArrowUp');
    expect(await box.inputValue()).toBe('revenue per month');
    await box.fill('');

    // 4. click the chip: the answer without the preference
    await chip.click();
    const again = page.locator('article.turn').nth(2);
    await again.locator('.answer').waitFor({ timeout: 20_000 });
    await expect.poll(() => again.getAttribute('data-status'), { timeout: 20_000 }).toBe('done');
    expect(await again.locator('details.sql code').textContent()).not.toContain('India');
    expect(await again.locator('.chips').count()).toBe(0);

    // 5. edit the memory, delete it, undo
    const item = bank.locator('li.memory').first();
    await item.getByRole('button', { name: /^Edit:/ }).click();
    await item.getByLabel('Memory text').fill('Always show me customers from India only');
    await item.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => bank.locator('.memory-text').allTextContents())
      .toEqual(['Always show me customers from India only']);
    await bank.getByRole('button', { name: /^Delete:/ }).click();
    await bank.getByText('Nothing remembered yet.').waitFor();
    await bank.getByRole('button', { name: 'Undo' }).click();
    await expect
      .poll(() => bank.locator('.memory-text').allTextContents())
      .toEqual(['Always show me customers from India only']);
    await bank.getByRole('button', { name: /^History:/ }).click();
    await expect.poll(() => bank.getByRole('list', { name: 'History' }).locator('li').count()).toBe(4); // ADD, UPDATE, DELETE, RESTORE
    await page.screenshot({ path: join(ARTIFACTS, 'browser-desktop-memory.png') });

    // Phone width: the chat and the memory bank are tabs.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Chat', exact: true }).click();
    await box.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-phone-chat.png') });
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    await bank.waitFor();
    await box.waitFor({ state: 'hidden' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-phone-memory.png') });
    await context.close();
    expect(offsite).toEqual([]);

    // 6. a second user sees an empty memory bank
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page2 = await other.newPage();
    await signIn(page2, tokens.bob!);
    await page2.getByRole('region', { name: 'Memory bank' }).getByText('Nothing remembered yet.').waitFor();
    await page2.screenshot({ path: join(ARTIFACTS, 'browser-desktop-second-user.png') });
    await other.close();
    expect(serverLog()).not.toContain(tokens.alice!);
    expect(serverLog()).not.toContain(tokens.bob!);
  }, 90_000);
  for (const [width, height, name] of [
    [1280, 800, 'desktop'],
    [390, 844, 'phone'],
  ] as const) {
    it(`${name} ${width}×${height}: two charted answers keep the question box in view; reload keeps the conversation; edit SQL and run; memory with SQL; axe clean`, async () => {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      await page.goto(url);
      await page.getByLabel('Access token').fill((name === 'desktop' ? tokens.carol : tokens.dave)!);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const box = page.getByLabel('Question');
      await box.waitFor();
      for (const [i, question] of ['revenue per month', 'revenue by country'].entries()) {
        await box.fill(question);
        await page.getByRole('button', { name: 'Send' }).click();
        const turn = page.locator('article.turn').nth(i);
        // Send is disabled while the question runs.
        await expect.poll(() => turn.getAttribute('data-status'), { timeout: 20_000 }).toBe('done');
        await turn.getByRole('img', { name: /chart of revenue/ }).waitFor();
      }
      const last = page.locator('article.turn').nth(1);
      // The page itself never scrolls: the turns list does; the question box and header stay in view.
      expect(
        await page.evaluate(() => [
          document.scrollingElement.scrollHeight,
          document.scrollingElement.scrollWidth,
        ]),
      ).toEqual([height, width]);
      expect(await inViewport(page, 'textarea[aria-label="Question"]')).toBe(true);
      expect(await inViewport(page, 'header.top')).toBe(true);
      // New answers were scrolled into view: the last turn's bottom is visible.
      expect(
        await last.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const list = el.closest('.turns')!.getBoundingClientRect();
          return r.bottom <= list.bottom + 2;
        }),
      ).toBe(true);
      // Numbers are right-aligned and grouped; the chart type can be changed.
      const revenueCell = last.locator('table[aria-label="Result"] tbody tr').first().locator('td').nth(1);
      expect(await revenueCell.evaluate((el) => getComputedStyle(el).textAlign)).toBe('right');
      await last.getByRole('button', { name: 'Line', exact: true }).click();
      await last.getByRole('img', { name: /line chart of revenue by country/ }).waitFor();
      await last.getByRole('button', { name: 'No chart', exact: true }).click();
      await expect.poll(() => last.getByRole('img', { name: /chart of revenue/ }).count()).toBe(0);
      await last.getByRole('button', { name: 'Bar', exact: true }).click();
      await page.screenshot({ path: join(ARTIFACTS, `browser-${name}-two-charts.png`) });

      // Reload: the conversation is reopened.
      await page.reload();
      await expect
        .poll(() => page.locator('article.turn .question').allTextContents(), { timeout: 15_000 })
        .toEqual([
          expect.stringContaining('revenue per month'),
          expect.stringContaining('revenue by country'),
        ]);
      if (name === 'desktop') {
        const nav = page.getByRole('navigation', { name: 'Conversations' });
        await expect.poll(() => nav.locator('li').count()).toBe(1);
        expect(await nav.locator('li').first().textContent()).toContain('revenue per month');
      }

      // Edit the SQL of the first turn and run it: a new turn with the edited result.
      const first = page.locator('article.turn').first();
      await first.getByRole('button', { name: 'Edit SQL' }).click();
      await first
        .getByLabel('SQL to run')
        .fill('SELECT 9007199254740993::int8 AS big, NULL::text AS nothing, 2 AS n');
      await first.getByRole('button', { name: 'Run SQL' }).click();
      const ran = page.locator('article.turn[data-kind="sql"]').first();
      await expect.poll(() => ran.getAttribute('data-status'), { timeout: 15_000 }).toBe('done');
      const cells = ran.locator('table[aria-label="Result"] tbody tr').first().locator('td');
      expect(await cells.nth(0).textContent()).toMatch(/^9.007.199.254.740.993$/);
      expect(await cells.nth(1).getAttribute('class')).toBe('null');
      await page.screenshot({ path: join(ARTIFACTS, `browser-${name}-edited-sql.png`) });
      if (name === 'desktop') {
        // CSV keeps every digit and NULL as an empty unquoted field.
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          ran.getByRole('button', { name: 'Download CSV' }).click(),
        ]);
        expect(readFileSync((await download.path())!, 'utf8')).toBe('big,nothing,n\r\n9007199254740993,,2');
        // A result cut at the row cap says so, and that sorting covers the fetched rows only.
        await ran.getByRole('button', { name: 'Edit SQL' }).click();
        await ran.getByLabel('SQL to run').fill('SELECT g FROM generate_series(1, 1500) g');
        await ran.getByRole('button', { name: 'Run SQL' }).click();
        const capped = page.locator('article.turn[data-kind="sql"]').nth(1);
        await expect.poll(() => capped.getAttribute('data-status'), { timeout: 15_000 }).toBe('done');
        expect(await capped.locator('.notice').textContent()).toContain(
          'Sorting covers the fetched rows only.',
        );
        expect(await capped.locator('.notice').textContent()).toContain('first 1000 rows');
      }

      // Add a memory with an SQL condition.
      if (name === 'phone') await page.getByRole('button', { name: 'Memory', exact: true }).click();
      const bank = page.getByRole('region', { name: 'Memory bank' });
      await bank.getByLabel('New memory', { exact: true }).fill('a big order is over 1000');
      await bank.getByLabel('New memory SQL').fill('orders.total_amount > 1000');
      await bank.getByRole('button', { name: 'Add' }).click();
      await expect
        .poll(() => bank.locator('.memory-sql').allTextContents(), { timeout: 15_000 })
        .toEqual(['orders.total_amount > 1000']);
      await page.screenshot({ path: join(ARTIFACTS, `browser-${name}-memory-sql.png`) });
      if (name === 'phone') await page.getByRole('button', { name: 'Chat', exact: true }).click();

      if (name === 'phone') {
        // 44 px touch targets (WCAG 2.5.5) for every visible control on the phone.
        const small = await page.evaluate(() =>
          [...document.querySelectorAll('button, input, select, textarea, summary')]
            .map((el) => ({ el, r: el.getBoundingClientRect() }))
            .filter(({ r }) => r.width > 0 && r.height > 0)
            .filter(({ r }) => r.height < 44 || r.width < 44)
            .map(
              ({ el, r }) =>
                `${el.tagName} "${el.getAttribute('aria-label') ?? el.textContent}" ${r.width}x${r.height}`,
            ),
        );
        expect(small).toEqual([]);
      }
      expect(await axeViolations(page)).toEqual([]);
      if (name === 'desktop') {
        // Rename, then delete the conversation from the sidebar; New chat empties the chat.
        const nav = page.getByRole('navigation', { name: 'Conversations' });
        await nav.getByRole('button', { name: /^Rename: / }).click();
        await nav.getByLabel('New name').fill('Revenue review');
        await nav.getByRole('button', { name: 'Save' }).click();
        await expect.poll(() => nav.locator('li').first().textContent()).toContain('Revenue review');
        await nav.getByRole('button', { name: 'Delete: Revenue review' }).click();
        await expect.poll(() => nav.locator('li').count()).toBe(0);
        expect(await page.locator('article.turn').count()).toBe(0);
        await page.reload();
        await box.waitFor();
        expect(await page.locator('article.turn').count()).toBe(0);
      }
      await context.close();
    }, 120_000);
  }

  it('polish: favicon, SVG icons, ungrouped ids, full titles, reopened at the question, Memory tab on a wide screen', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, tokens.grace!);
    expect(
      await page.evaluate(() => document.querySelector('link[rel="icon"]')?.getAttribute('href') ?? ''),
    ).toMatch(/^data:image\/svg\+xml,/);

    // Two answers: the conversation's title is the first question, whole.
    const question = 'revenue by country over the whole period, every country included please';
    const box = page.getByLabel('Question');
    for (const q of [question, 'revenue by country again']) {
      await box.fill(q);
      await box.press('Enter');
      await expect
        .poll(() => page.locator('article.turn').last().getAttribute('data-status'), { timeout: 20_000 })
        .toBe('done');
    }
    const first = page.locator('article.turn').first();
    // Thumbs up/down are drawn as SVG, no emoji character (they need an emoji font).
    const thumbs = first.locator('.feedback button');
    expect(await thumbs.count()).toBe(2);
    for (const b of await thumbs.all()) {
      expect(await b.locator('svg').count()).toBe(1);
      expect((await b.textContent())?.trim()).toBe('');
    }
    const nav = page.getByRole('navigation', { name: 'Conversations' });
    await expect.poll(() => nav.locator('li .open').first().getAttribute('title')).toBe(question);
    for (const b of await nav.locator('.conv-actions button').all())
      expect(await b.locator('svg').count()).toBe(1);

    // Identifier and year columns are not digit-grouped; a count is.
    await first.getByRole('button', { name: 'Edit SQL' }).click();
    await first
      .getByLabel('SQL to run')
      .fill('SELECT 1455 AS id, 1455 AS n, 2024 AS year FROM generate_series(1, 3) LIMIT 1');
    await first.getByRole('button', { name: 'Run SQL' }).click();
    const ran = page.locator('article.turn[data-kind="sql"]').last();
    await expect.poll(() => ran.getAttribute('data-status'), { timeout: 15_000 }).toBe('done');
    expect(
      await ran.locator('table[aria-label="Result"] tbody tr').first().locator('td').allTextContents(),
    ).toEqual(['1455', '1,455', '2024']);
    // The statement's own LIMIT cut the list: the table says so (not a total).
    expect(await ran.locator('.notice').textContent()).toContain(
      "the first 1 row (the query's LIMIT 1), not a total",
    );

    // Reopened (reload): the last answer is shown from its question, not scrolled to its end.
    await page.reload();
    // The two answers come back (a hand-run statement is not part of the stored conversation).
    await expect.poll(() => page.locator('article.turn').count(), { timeout: 15_000 }).toBe(2);
    await page.waitForTimeout(300);
    const questionInView = await page.evaluate(() => {
      const list = document.querySelector('.turns').getBoundingClientRect();
      const turns = document.querySelectorAll('article.turn');
      const q = turns[turns.length - 1].getBoundingClientRect();
      return q.top >= list.top - 1 && q.top < list.bottom;
    });
    expect(questionInView).toBe(true);
    expect(await page.evaluate(() => document.querySelector('.turns').scrollTop)).toBeGreaterThan(0);

    // The Memory tab does something on a wide screen: the focus moves to the memory bank.
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.classList.contains('side-col') ?? false))
      .toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-desktop-polish.png') });
    await context.close();
  }, 120_000);

  it('a line chart over dates is drawn in date order whatever the order of the rows', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, tokens.heidi!);
    const box = page.getByLabel('Question');
    await box.fill(UNSORTED_QUESTION);
    await box.press('Enter');
    const turn = page.locator('article.turn').last();
    await turn.getByRole('img', { name: /line chart of revenue by day/ }).waitFor({ timeout: 20_000 });
    const table = turn.getByRole('table', { name: 'Result' });
    const days = await table.locator('tbody tr td:first-child').allTextContents();
    expect(days).toHaveLength(3);
    // The table shows the statement's order (March, January, February) …
    expect(days[0]).toContain('03');
    expect(days[1]).toContain('01');
    // … and the line runs January, February, March: its points in the order drawn, as the chart's
    // description (the canvas's words for a screen reader) names them.
    const description = (await turn.locator('.chart-points').textContent()) ?? '';
    const points = description
      .replace(/^day from left to right: /, '')
      .replace(/\.$/, '')
      .split(', ');
    expect(points).toEqual([days[1], days[2], days[0]]);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-line-date-order.png') });
    await context.close();
  }, 60_000);

  it('an answer without the model shows its path as a badge', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, tokens.erin!);
    const box = page.getByLabel('Question');
    await box.fill(RULE_QUESTION);
    await box.press('Enter');
    const turn = page.locator('article.turn').first();
    await expect.poll(() => turn.getAttribute('data-status'), { timeout: 30_000 }).toBe('done');
    expect(await turn.locator('.path .badge').textContent()).toBe('rule-based answer');
    expect(await turn.locator('.answer').textContent()).toMatch(/without the model by the rule "count"/);
    await context.close();
  }, 60_000);

  it('Stop cancels a running question; Retry is offered; Send is enabled again', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, tokens.erin!);
    const box = page.getByLabel('Question');
    await box.fill(SLOW_MODEL_QUESTION);
    await box.press('Enter');
    const send = page.getByRole('button', { name: 'Send' });
    await expect.poll(() => send.isDisabled()).toBe(true);
    await page.getByRole('list', { name: 'Progress' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-desktop-progress.png') });
    await page.getByRole('button', { name: 'Stop' }).click();
    const turn = page.locator('article.turn').first();
    await expect.poll(() => turn.getAttribute('data-status')).toBe('stopped');
    await turn.getByRole('button', { name: 'Retry' }).waitFor();
    expect(await send.isDisabled()).toBe(false);
    await context.close();
  }, 60_000);

  it.skipIf(!TEST_DATABASE_URL)(
    'Stop on server PostgreSQL: the running statement leaves pg_stat_activity',
    async () => {
      let db: TempDatabase | undefined;
      let child: ChildProcess | undefined;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      // Rows stream from a cursor in batches (issue 14): the running statement shows as its FETCH.
      const running = async (name: string) =>
        (
          await admin.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = $1 AND state = 'active'
               AND (query ILIKE '%generate_series(1, 40000)%' OR query ILIKE 'FETCH % FROM sqlrecall_cursor')`,
            [name],
          )
        ).rows[0].n as number;
      try {
        db = await createTempDatabase('sqlrecall_browser_stop');
        const pgHome = mkdtempSync(join(tmpdir(), 'sqlrecall-browser-pg-'));
        const memory = createPgliteClient(join(pgHome, 'memory'));
        const token = await new UserDirectory(memory).add('frank');
        await memory.close();
        const served = await startServe(db.url, model.url, pgHome);
        child = served.child;
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto(served.url);
        await page.getByLabel('Access token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        const box = page.getByLabel('Question');
        await box.fill(SLOW_QUESTION);
        await box.press('Enter');
        await expect.poll(() => running(db!.name), { timeout: 20_000 }).toBe(1);
        const stoppedAt = Date.now();
        await page.getByRole('button', { name: 'Stop' }).click();
        await expect.poll(() => running(db!.name), { timeout: 5_000, interval: 100 }).toBe(0);
        const tookMs = Date.now() - stoppedAt;
        process.stderr.write(`browser Stop: statement gone from pg_stat_activity after ${tookMs} ms\n`);
        expect(tookMs).toBeLessThan(5_000);
        await context.close();
        rmSync(pgHome, { recursive: true, force: true });
      } finally {
        await stopServe(child);
        await admin.end();
        await db?.drop();
      }
    },
    90_000,
  );
});
