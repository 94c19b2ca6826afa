/**
 * Applied and recalled memories, provenance and a reopened conversation's evidence in the web UI:
 * Debian's Chromium (playwright-core, never a downloaded browser) against the real
 * `sqlrecall serve --users` on the demo database, with the scripted model server. FAILS (never
 * skips) when /usr/bin/chromium is absent. Screenshots go to test-artifacts/ (gitignored).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

// biome-ignore lint/suspicious/noExplicitAny: browser globals, used only inside page.evaluate
declare const getComputedStyle: any;

const INDIA = 'Always show me customers from India';
const LOYAL = 'Loyal customer means a customer who came back after a complaint';
const QUESTION = 'revenue per month of loyal customers';

/** Revenue of the last six whole months, for India only when the prompt carries that preference. */
function monthlySql(india: boolean): string {
  return [
    "SELECT date_trunc('month', o.order_date)::date AS month, sum(o.total_amount) AS revenue",
    'FROM orders o JOIN customers c ON c.id = o.customer_id',
    "WHERE o.order_date >= date_trunc('month', current_date) - interval '6 months'",
    "AND o.order_date < date_trunc('month', current_date)",
    india ? "AND c.country = 'India'" : '',
    'GROUP BY 1 ORDER BY 1',
  ]
    .filter(Boolean)
    .join(' ');
}

describe('memory evidence in the web UI (Chromium)', () => {
  let home: string;
  let model: ScriptedOllama;
  let serve: ChildProcess;
  let url: string;
  let browser: Browser;
  let serverLog: () => string = () => '';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    prepareBrowserTest();
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-browser-evidence-'));
    const dbDir = join(home, 'demo-shop');
    await createDemoDatabase(dbDir);
    model = await startScriptedOllama({
      chat: (request) => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD' });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER))
          return `\`\`\`sql\n${monthlySql(/customers from India/i.test(prompt))}\n\`\`\``;
        return 'Revenue per month for the last six months.';
      },
    });
    const client = createPgliteClient(join(home, 'memory'));
    const users = new UserDirectory(client);
    tokens.alice = await users.add('alice');
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

  it('chips tell applied from recalled, say where a memory came from; a reopened turn keeps them and runs again', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, tokens.alice!);
    const bank = page.getByRole('region', { name: 'Memory bank' });
    const box = page.getByLabel('Question');

    // Taught in chat, and a definition added by hand in the memory bank.
    await box.fill(INDIA);
    await box.press('Enter');
    await bank.locator('.memory-text', { hasText: 'customers from India' }).waitFor({ timeout: 15_000 });
    await bank.getByLabel('Kind').selectOption('term');
    await bank.getByLabel('New memory', { exact: true }).fill(LOYAL);
    await bank.getByRole('button', { name: 'Add' }).click();
    await bank.locator('.memory-text', { hasText: 'Loyal customer' }).waitFor();
    expect(await bank.locator('li.memory', { hasText: INDIA }).locator('.memory-applied').textContent()).toBe(
      'Never applied',
    );

    await box.fill(QUESTION);
    await box.press('Enter');
    const turn = page.locator('article.turn').nth(1);
    await expect.poll(() => turn.getAttribute('data-status'), { timeout: 20_000 }).toBe('done');
    const applied = turn.locator('fieldset.chips.applied');
    const recalled = turn.locator('fieldset.chips.recalled');
    await applied.getByRole('button', { name: `Ask again without: ${INDIA}` }).waitFor();
    const loyalChip = recalled.getByRole('button', { name: `Ask again without: ${LOYAL}` });
    await loyalChip.waitFor();
    expect(await applied.getByRole('button', { name: /Ask again without/ }).count()).toBe(1);
    expect(await recalled.getByRole('button', { name: /Ask again without/ }).count()).toBe(1);
    // Styled apart: a recalled chip is dashed, an applied one is not.
    expect(await loyalChip.evaluate((el) => getComputedStyle(el).borderTopStyle)).toBe('dashed');
    expect(
      await applied
        .locator('button.chip')
        .first()
        .evaluate((el) => getComputedStyle(el).borderTopStyle),
    ).not.toBe('dashed');

    // Where from? on a chip: taught in a conversation, in the user's own words.
    await applied.getByRole('button', { name: `Where from: ${INDIA}` }).click();
    const origin = applied.getByRole('definition').first();
    await expect.poll(() => origin.textContent()).toContain('Taught in a conversation');
    expect(await origin.textContent()).toContain(INDIA);
    await recalled.getByRole('button', { name: `Where from: ${LOYAL}` }).click();
    await expect
      .poll(() => recalled.getByRole('definition').first().textContent())
      .toContain('Added by hand');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-evidence-chips.png') });

    // The memory bank shows when it was last applied.
    await page
      .getByRole('button', { name: 'Memory', exact: true })
      .click()
      .catch(() => undefined);
    await expect
      .poll(() => bank.locator('li.memory', { hasText: INDIA }).locator('.memory-applied').textContent())
      .toMatch(/^Last applied /);

    // Reload: the reopened conversation keeps the SQL, the chips, and can run the SQL again.
    await page.reload();
    const past = page.locator('article.turn', { hasText: QUESTION });
    await past.waitFor({ timeout: 15_000 });
    expect(await past.locator('details.sql code').textContent()).toContain("c.country = 'India'");
    await past
      .locator('fieldset.chips.applied')
      .getByRole('button', { name: `Ask again without: ${INDIA}` })
      .waitFor();
    await past
      .locator('fieldset.chips.recalled')
      .getByRole('button', { name: `Ask again without: ${LOYAL}` })
      .waitFor();
    expect(await past.getByRole('table', { name: 'Result' }).count()).toBe(0);
    await past.getByRole('button', { name: 'Run again' }).click();
    await past.getByRole('table', { name: 'Result' }).waitFor({ timeout: 15_000 });
    await expect.poll(() => past.getByRole('table', { name: 'Result' }).locator('tbody tr').count()).toBe(6);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-evidence-run-again.png') });
    await context.close();
    expect(serverLog()).not.toContain(tokens.alice!);
  }, 120_000);

  it('the memory bank shows the day each memory lasts, as typed, in the browser’s time zone', async () => {
    // West of UTC: the end of 2099-12-31 there is 2100-01-01 in UTC, never shown.
    const zone = 'America/Los_Angeles';
    const add = async (text: string, until: string) => {
      const res = await fetch(`${url}/api/memories`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.alice!}`,
          'content-type': 'application/json',
          'x-sqlrecall-time-zone': zone,
        },
        body: JSON.stringify({ kind: 'context', text, until }),
      });
      expect(res.status).toBe(200);
    };
    await add('Year-end figures are provisional', '2099-12-31');
    // A day already over is refused when taught; an expired memory still arrives by import (or
    // by time passing), and the bank must show it as expired on the day typed.
    const past = await fetch(`${url}/api/memories`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.alice!}`,
        'content-type': 'application/json',
        'x-sqlrecall-time-zone': zone,
      },
      body: JSON.stringify({
        kind: 'context',
        text: 'The spring promotion ran in euros',
        until: '2020-03-31',
      }),
    });
    expect(past.status).toBe(422);
    const imported = await fetch(`${url}/api/memories/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.alice!}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        format: 'sqlrecall-memory',
        version: 1,
        memories: [
          {
            id: 'spring',
            kind: 'context',
            text: 'The spring promotion ran in euros',
            expiresAt: '2020-04-01T07:00:00.000Z',
            expiresOn: '2020-03-31',
          },
        ],
      }),
    });
    expect(imported.status, await imported.clone().text()).toBe(200);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: zone });
    const page = await context.newPage();
    await signIn(page, tokens.alice!);
    const bank = page.getByRole('region', { name: 'Memory bank' });
    const expiry = (text: string) => bank.locator('li.memory', { hasText: text }).locator('.memory-expiry');
    await expect.poll(() => expiry('Year-end figures').textContent()).toBe('Until 2099-12-31');
    expect(await expiry('Year-end figures').locator('time').getAttribute('datetime')).toBe('2099-12-31');
    expect(await expiry('spring promotion').textContent()).toBe('Expired after 2020-03-31');
    // A memory without an expiry shows none.
    expect(await expiry(LOYAL).count()).toBe(0);
    expect(await bank.textContent()).not.toContain('2100-01-01');
    await context.close();
  }, 120_000);
});
